import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAsyncApiSource, type AsyncApiSource } from './source';

export class AsyncApiSourceError extends Error {
  override name = 'AsyncApiSourceError';
}

/**
 * The service's own description, from the module it names: a compiled .js/.mjs file, or a .ts one
 * when the CLI runs under a TypeScript loader (`node --import tsx`, `npx tsx`). The module
 * exports `asyncApi: AsyncApiSource`, or the source as its default export. The CLI cannot find
 * the types any other way: they are values in the service's code, not in its database.
 */
export async function loadAsyncApiSource(modulePath: string, cwd = process.cwd()): Promise<AsyncApiSource> {
  const file = path.resolve(cwd, modulePath);
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  } catch (err) {
    throw new AsyncApiSourceError(`cannot load ${modulePath}: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
  const fromDefault = loaded.default as Record<string, unknown> | undefined;
  const candidates = [loaded.asyncApi, fromDefault?.asyncApi, fromDefault];
  const source = candidates.find(isAsyncApiSource);
  if (source === undefined) throw new AsyncApiSourceError(`${modulePath} exports no asyncApi (an object with an events array of defineEvent definitions, optional handlers and info)`);
  return source;
}

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineEventCatalog, type EventCatalog } from '../events/catalog';
import { isEventDefinition } from '../events/define-event';
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

/**
 * The event catalog a bundled relay worker checks rows against (`--events`, OUTBOX_EVENTS_MODULE):
 * the events of the module `asyncapi --module` reads. A module without one definition would start
 * a relay that checks nothing while its operator believes it does, so it is refused.
 */
export async function loadEventCatalogModule(modulePath: string, cwd = process.cwd()): Promise<EventCatalog> {
  const source = await loadAsyncApiSource(modulePath, cwd);
  if (source.events.length === 0) throw new AsyncApiSourceError(`${modulePath} has no event definitions: its asyncApi.events is empty (list the defineEvent definitions the relay checks rows against)`);
  const notDefinitions = source.events.filter((e) => !isEventDefinition(e));
  if (notDefinitions.length) throw new AsyncApiSourceError(`${modulePath}: asyncApi.events holds ${notDefinitions.length} value(s) that are not defineEvent definitions`);
  try {
    return defineEventCatalog(source.events);
  } catch (err) {
    throw new AsyncApiSourceError(`${modulePath}: ${(err as Error).message}`, { cause: err });
  }
}

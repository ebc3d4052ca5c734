import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../src/config/env';
import { workflowInterceptorModules } from './workflow-interceptors';

/**
 * A bundle's file name: the workflows module's path under `workflows/` (`relay/index` is `relay`,
 * `scheduled` stays `scheduled`), `.traced` when it carries the tracing interceptors.
 */
export function bundleName(workflowsPath: string, traced: boolean): string {
  const module = path.relative(workflowsRoot(workflowsPath), workflowsPath).replace(/\.(ts|js)$/, '').replace(/\/index$/, '');
  return `${module.split(path.sep).join('-')}${traced ? '.traced' : ''}`;
}

/** The `workflows` folder a workflows module lives in (the source tree's or dist's). */
function workflowsRoot(workflowsPath: string): string {
  let dir = path.dirname(workflowsPath);
  while (path.basename(dir) !== 'workflows' && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/**
 * The bundle `npm run build` made of this workflows module, when there is one: the installed
 * package ships `dist/workflow-bundles/<name>.js` (and `<name>.traced.js`, with the OpenTelemetry
 * workflow interceptors) beside `dist/workflows/`, so a package user's worker starts
 * without webpack, tsx or any path of its own.
 */
export function prebuiltBundlePath(workflowsPath: string, traced: boolean): string | undefined {
  const file = path.join(workflowsRoot(workflowsPath), '..', 'workflow-bundles', `${bundleName(workflowsPath, traced)}.js`);
  return fs.existsSync(file) ? file : undefined;
}

/**
 * Bundles workflow code with webpack in a short-lived child process and returns the code.
 * Bundling in the worker's own process costs heap that a long-lived worker never gives back, a
 * third of an idle consumer's RSS (docs/measurements/relay-log.md, "Figures behind code comments"); the
 * worker only needs the resulting code.
 *
 * The result is kept in the cache folder under a key made of every source file webpack could
 * have read (this checkout's TypeScript outside tests and benchmarks, the lock file, the Node
 * version), so a worker restarted on unchanged code (a supervisor after a crash, a second worker
 * process) starts in about a second instead of bundling again; any edit makes a new key.
 */
export async function bundleInChildProcess(cacheDir: string, workflowsPath: string, traced: boolean): Promise<string> {
  const dir = path.join(cacheDir, 'workflow-bundles');
  fs.mkdirSync(dir, { recursive: true });
  const name = bundleName(workflowsPath, traced);
  const interceptors = workflowInterceptorModules(traced);
  const cached = path.join(dir, `${name}-${sourceKey(workflowsPath, interceptors)}.js`);
  if (fs.existsSync(cached)) return fs.readFileSync(cached, 'utf8');
  const out = path.join(dir, `${name}-${process.pid}-${Date.now()}.tmp.js`);
  const script = `require('@temporalio/worker').bundleWorkflowCode({ workflowsPath: ${JSON.stringify(workflowsPath)}, workflowInterceptorModules: ${JSON.stringify(interceptors)} })
    .then((b) => require('node:fs').writeFileSync(${JSON.stringify(out)}, b.code))
    .catch((e) => { console.error(e); process.exit(1); });`;
  // TypeScript sources (this repository) need the tsx loader; compiled ones do not.
  const loader = workflowsPath.endsWith('.ts') ? ['--require', 'tsx/cjs'] : [];
  await promisify(execFile)(process.execPath, [...loader, '-e', script], { cwd: PROJECT_ROOT, maxBuffer: 16 * 1024 * 1024 });
  try {
    const code = fs.readFileSync(out, 'utf8');
    // Renamed into place whole: a worker starting at the same moment reads either nothing or all of it.
    fs.renameSync(out, cached);
    pruneOldBundles(dir, name);
    return code;
  } finally {
    fs.rmSync(out, { force: true });
  }
}

/** Keeps the few newest bundles of this workflows module (one per recent version of the code). */
function pruneOldBundles(dir: string, name: string, keep = 6) {
  const mine = fs
    .readdirSync(dir)
    .filter((f) => f.startsWith(`${name}-`) && f.endsWith('.js') && !f.endsWith('.tmp.js'))
    .map((f) => ({ file: path.join(dir, f), mtime: fs.statSync(path.join(dir, f)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime);
  for (const old of mine.slice(keep)) fs.rmSync(old.file, { force: true });
}

const NOT_BUNDLED = new Set(['node_modules', 'test', 'tools', 'examples', 'dist', 'docs', '.git', '.cache']);

/** A digest of everything a bundle of this checkout's workflow code (with these interceptors) can depend on. */
function sourceKey(workflowsPath: string, interceptors: string[]): string {
  const hash = createHash('sha256').update(process.version).update(workflowsPath).update(JSON.stringify(interceptors));
  const lockFile = path.join(PROJECT_ROOT, 'package-lock.json');
  if (fs.existsSync(lockFile)) hash.update(fs.readFileSync(lockFile));
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.') || NOT_BUNDLED.has(entry.name)) continue;
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (/\.(ts|js|json)$/.test(entry.name)) hash.update(file).update(fs.readFileSync(file));
    }
  };
  walk(PROJECT_ROOT);
  return hash.digest('hex').slice(0, 16);
}

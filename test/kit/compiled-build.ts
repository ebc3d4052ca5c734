import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { PROJECT_ROOT } from '../../src/config/env';

// The worker processes and CLI runs a test starts run this checkout's code as JavaScript compiled
// once per run, not TypeScript through tsx: tsx costs each start seconds of module loading, and
// the suite starts some seventy workers (docs/measurements/ci-timings.md). The build is esbuild's
// file-by-file transform, the same one tsx applies at load time, so a compiled worker runs the code
// a tsx-loaded one would; it takes under a second. It lives in .cache/compiled/<digest of the
// sources>/, so an edit since the last run makes a new build and never runs stale code.
// OUTBOX_TEST_FROM_SOURCE=1 runs every such process through tsx instead (to tell a build problem
// from a code problem).

/** The folders a spawned process's code comes from (its entry and everything it imports). */
const SOURCE_ROOTS = ['src', 'workflows', 'activities', 'workers', 'examples', 'tools', 'test/fixtures', 'test/kit'];
/** Folders of SQL that code finds beside itself (`__dirname`, PROJECT_ROOT), linked into the build. */
const LINKED = ['migrations', 'examples/payments/migrations', 'examples/shipping/migrations'];
const BUILDS_DIR = path.join(PROJECT_ROOT, '.cache', 'compiled');
const KEEP_BUILDS = 3;
/** A build takes a second or so; a partial one this old belongs to a process that died building it. */
const ABANDONED_AFTER_MS = 10 * 60_000;

let built: string | undefined;

/** True when the suite's processes run from source through tsx (OUTBOX_TEST_FROM_SOURCE=1). */
export function fromSource(): boolean {
  return process.env.OUTBOX_TEST_FROM_SOURCE === '1';
}

/**
 * Node's arguments that run one of this checkout's TypeScript files (absolute, or relative to the
 * project): its compiled JavaScript, or the source through tsx when fromSource().
 */
export function nodeScript(file: string): string[] {
  const source = path.resolve(PROJECT_ROOT, file);
  return fromSource() ? ['--require', 'tsx/cjs', source] : [compiledFile(source)];
}

/** The compiled JavaScript of a TypeScript file of this checkout (the source itself when fromSource()). */
export function compiledScript(file: string): string {
  const source = path.resolve(PROJECT_ROOT, file);
  return fromSource() ? source : compiledFile(source);
}

function compiledFile(source: string): string {
  const relative = path.relative(PROJECT_ROOT, source);
  if (!source.endsWith('.ts') || !SOURCE_ROOTS.some((root) => relative.startsWith(`${root}${path.sep}`))) {
    throw new Error(`${relative} is not in the compiled build (TypeScript under ${SOURCE_ROOTS.join(', ')})`);
  }
  const file = path.join(compiledBuild(), relative.replace(/\.ts$/, '.js'));
  if (!fs.existsSync(file)) throw new Error(`the compiled build has no ${path.relative(PROJECT_ROOT, file)} (is ${relative} there?)`);
  return file;
}

/** The build's folder, made (synchronously, as spawning is) the first time this process asks. */
export function compiledBuild(): string {
  built ??= compileProject(PROJECT_ROOT, BUILDS_DIR);
  return built;
}

/**
 * The compiled build of the project at `root` for its sources as they are now: reused when
 * `buildsDir` already has one for them, else made there.
 */
export function compileProject(root: string, buildsDir: string): string {
  const sources = SOURCE_ROOTS.flatMap((folder) => typeScriptFiles(path.join(root, folder)));
  const hash = createHash('sha256').update(fs.readFileSync(path.join(root, 'tsconfig.json')));
  for (const file of sources) hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file));
  const dir = path.join(buildsDir, hash.digest('hex').slice(0, 16));
  if (fs.existsSync(dir)) return dir;
  // Built beside and renamed into place whole: a run starting at the same moment sees all of it or none.
  const partial = `${dir}.${process.pid}.partial`;
  fs.rmSync(partial, { recursive: true, force: true });
  try {
    buildSync({ entryPoints: sources, outdir: partial, outbase: root, absWorkingDir: root, format: 'cjs', platform: 'node', target: 'node20', sourcemap: 'linked', logLevel: 'silent' });
  } catch (err) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw new Error(`compiling the sources for the test's processes failed (OUTBOX_TEST_FROM_SOURCE=1 runs them through tsx): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  for (const folder of LINKED) {
    if (!fs.existsSync(path.join(root, folder))) continue;
    fs.mkdirSync(path.dirname(path.join(partial, folder)), { recursive: true });
    fs.symlinkSync(path.join(root, folder), path.join(partial, folder));
  }
  // The example and the tools import the library by its package name (tsconfig "paths"): a
  // package.json of that name makes it a self-reference, resolved inside the build.
  fs.writeFileSync(path.join(partial, 'package.json'), `${JSON.stringify(selfReference(), null, 2)}\n`);
  try {
    fs.renameSync(partial, dir);
  } catch (err) {
    fs.rmSync(partial, { recursive: true, force: true });
    if (!fs.existsSync(dir)) throw err;
  }
  pruneOldBuilds(buildsDir, dir);
  return dir;
}

/** The package's exports as tsconfig "paths" maps them: the root to src/index, subpaths to src/api/*. */
function selfReference() {
  return { name: 'temporal-outbox', private: true, type: 'commonjs', exports: { '.': './src/index.js', './*': './src/api/*.js' } };
}

function typeScriptFiles(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

/** Keeps the few newest builds, and drops what a process killed while building left behind. */
function pruneOldBuilds(buildsDir: string, current: string) {
  const entries = fs.readdirSync(buildsDir).map((name) => ({ dir: path.join(buildsDir, name), mtimeMs: fs.statSync(path.join(buildsDir, name)).mtimeMs }));
  const abandoned = entries.filter((e) => e.dir.endsWith('.partial') && Date.now() - e.mtimeMs > ABANDONED_AFTER_MS);
  const builds = entries.filter((e) => !e.dir.endsWith('.partial') && e.dir !== current).sort((a, b) => b.mtimeMs - a.mtimeMs);
  for (const old of [...abandoned, ...builds.slice(KEEP_BUILDS - 1)]) fs.rmSync(old.dir, { recursive: true, force: true });
}

import fs from 'node:fs';
import path from 'node:path';

// Which test files each of `npm test`'s two mocha processes runs (tools/scripts/test-lanes.ts),
// and what each one's environment changes. Split by folder: the end-to-end files and the
// integration and unit files take close enough to the same time (docs/measurements/
// ci-timings.md) that a hand-kept list of files would not pay for itself.

export interface Lane {
  name: string;
  /** Mocha's spec arguments: globs relative to the project root. */
  specs: string[];
}

export const LANES: Lane[] = [
  { name: 'e2e', specs: ['test/e2e/**/*.test.ts'] },
  { name: 'integration', specs: ['test/integration/**/*.test.ts', 'test/unit/**/*.test.ts'] },
];

/** The folders the lanes' globs cover (each glob is `<folder>/**\/*.test.ts`). */
export function laneFolders(lanes: Lane[] = LANES): string[] {
  return lanes.flatMap((l) => l.specs.map((s) => s.replace(/\/\*\*\/\*\.test\.ts$/, '')));
}

/** Every `*.test.ts` under test/, relative to `root`. */
export function allTestFiles(root: string, dir = 'test'): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return allTestFiles(root, rel);
    return entry.name.endsWith('.test.ts') ? [rel] : [];
  });
}

/** Test files `npm test` runs (its old glob, test/**\/*.test.ts) that no lane would. */
export function testFilesOutsideLanes(root: string, lanes: Lane[] = LANES): string[] {
  const folders = laneFolders(lanes);
  return allTestFiles(root).filter((file) => !folders.some((folder) => file.startsWith(`${folder}/`)));
}

/** The workers' default metrics port base (src/config/env.ts); CI's side steps use base + 100 and + 200. */
const METRICS_PORT_BASE_DEFAULT = 19400;
const METRICS_PORTS_PER_LANE = 300;

/**
 * Lane `index`'s environment: the first lane's is the caller's; each later one moves the workers'
 * metrics ports (a worker serves on its base + 0..2 and + 10..12) clear of the others' and of CI's
 * side steps, and, when MOCHA_TIMINGS_FILE is set, writes its timings to a file of its own.
 */
export function laneEnv(env: NodeJS.ProcessEnv, name: string, index: number, lanes: number): NodeJS.ProcessEnv {
  if (lanes === 1) return env;
  const out: NodeJS.ProcessEnv = { ...env };
  if (env.MOCHA_TIMINGS_FILE) out.MOCHA_TIMINGS_FILE = env.MOCHA_TIMINGS_FILE.replace(/(\.json)?$/, `.${name}.json`);
  const base = Number(env.METRICS_PORT_BASE ?? METRICS_PORT_BASE_DEFAULT);
  if (index > 0 && base !== 0) out.METRICS_PORT_BASE = String(base + index * METRICS_PORTS_PER_LANE);
  return out;
}

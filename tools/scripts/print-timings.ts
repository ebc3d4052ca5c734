// Prints the slowest test files of each MOCHA_TIMINGS_FILE given (tools/scripts/timing-reporter.cjs),
// so a CI log says where its minutes went even when the run failed half way.
import { existsSync, readFileSync } from 'node:fs';

interface FileTiming {
  file: string;
  seconds: number;
  passes: number;
  failures: number;
  pending: number;
}

const SHOWN = 20;

for (const path of process.argv.slice(2)) {
  if (!existsSync(path)) continue;
  const run = JSON.parse(readFileSync(path, 'utf8')) as { node: string; complete: boolean; files: FileTiming[] };
  const total = run.files.reduce((sum, f) => sum + f.seconds, 0);
  console.log(`\n${path} (Node ${run.node}${run.complete ? '' : ', interrupted'}): ${run.files.length} files, ${Math.round(total)} s`);
  for (const f of run.files.slice(0, SHOWN)) {
    console.log(`${f.seconds.toFixed(1).padStart(8)} s  ${f.file}  (${f.passes} passing, ${f.failures} failing, ${f.pending} pending)`);
  }
}

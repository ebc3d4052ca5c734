import '../../local-stack/apply-stack-env';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../../src/config/env';
import { loadStackConfig } from '../../local-stack/stack-config';
import { SUITE, type SuiteBenchmark } from './benchmarks';
import { measuredTable, replaceMarkedBlock } from './measured-table';
import { TARGETS, type ResultFile } from './targets';

// `npm run bench`: every benchmark of the suite in turn (tools/bench/suite/benchmarks.ts), then the
// measured table regenerated from the results files against the BRIEF's targets.
//   npm run bench                   full sizes; results in tools/bench/results/, docs/performance.md's table rewritten
//   npm run bench -- --quick        CI smoke: small sizes, results in tools/bench/results/quick/ (not
//                                   committed), the table written there as measured.md
//   --only relay,peer               a subset;   --results-dir DIR   results elsewhere
//   --table-only                    no benchmark run: regenerate the table from the results there

interface Options {
  quick: boolean;
  only?: string[];
  resultsDir: string;
  tableOnly: boolean;
}

function parseArgs(argv: string[]): Options {
  const quick = argv.includes('--quick');
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    if (i < 0) return undefined;
    const v = argv[i + 1];
    if (!v || v.startsWith('--')) throw new Error(`${flag} needs a value`);
    return v;
  };
  const known = new Set(['--quick', '--only', '--results-dir', '--table-only']);
  const unknown = argv.filter((a, i) => a.startsWith('--') && !known.has(a) && !(i > 0 && ['--only', '--results-dir'].includes(argv[i - 1]!)));
  if (unknown.length) throw new Error(`unknown option ${unknown.join(', ')}: use --quick, --only a,b, --results-dir DIR, --table-only`);
  const only = value('--only')?.split(',').map((s) => s.trim());
  for (const name of only ?? []) if (!SUITE.some((b) => b.name === name)) throw new Error(`--only: no benchmark named "${name}" (the suite has: ${SUITE.map((b) => b.name).join(', ')})`);
  const resultsDir = path.resolve(value('--results-dir') ?? path.join(PROJECT_ROOT, 'tools', 'bench', 'results', ...(quick ? ['quick'] : [])));
  return { quick, only, resultsDir, tableOnly: argv.includes('--table-only') };
}

function runOne(b: SuiteBenchmark, o: Options): Promise<{ ok: boolean; seconds: number }> {
  const started = Date.now();
  const env = { ...process.env, ...(o.quick ? b.quickEnv : b.fullEnv), BENCH_RESULTS_DIR: o.resultsDir };
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(PROJECT_ROOT, b.file)], { cwd: PROJECT_ROOT, env, stdio: 'inherit' });
  // Stopped (a test's timeout, Ctrl-C): pass it on, so the benchmark can end what it started.
  const forward = (signal: NodeJS.Signals) => {
    child.kill(signal);
    process.exitCode = 130;
  };
  process.on('SIGTERM', forward).on('SIGINT', forward);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      process.off('SIGTERM', forward).off('SIGINT', forward);
      if (process.exitCode === 130) process.exit(130);
      resolve({ ok: code === 0, seconds: Math.round((Date.now() - started) / 1000) });
    }),
  );
}

function readResult(dir: string, file: string): ResultFile | undefined {
  const p = path.join(dir, `${file}.json`);
  return fs.existsSync(p) ? (JSON.parse(fs.readFileSync(p, 'utf8')) as ResultFile) : undefined;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  fs.mkdirSync(o.resultsDir, { recursive: true });
  const outcome: { name: string; status: string }[] = [];
  if (!o.tableOnly) {
    for (const b of SUITE.filter((s) => !o.only || o.only.includes(s.name))) {
      if (!fs.existsSync(path.join(PROJECT_ROOT, b.file))) {
        console.log(`\n=== ${b.name}: skipped — ${b.file} does not exist yet`);
        outcome.push({ name: b.name, status: 'skipped (not written yet)' });
        continue;
      }
      console.log(`\n=== ${b.name}: ${b.file}${o.quick ? ' (quick)' : ''}, results in ${path.relative(PROJECT_ROOT, o.resultsDir) || '.'}`);
      const r = await runOne(b, o);
      outcome.push({ name: b.name, status: `${r.ok ? 'ok' : 'FAILED'} in ${r.seconds} s` });
    }
  }
  const config = loadStackConfig();
  const table = measuredTable(TARGETS, (file) => readResult(o.resultsDir, file), { shards: config.relay.shards, batchSize: config.relay.batchSize });
  fs.writeFileSync(path.join(o.resultsDir, 'measured.md'), table + '\n');
  const page = path.join(PROJECT_ROOT, 'docs', 'performance.md');
  const officialDir = path.join(PROJECT_ROOT, 'tools', 'bench', 'results');
  // Only full-size results in the project's own results folder speak for the docs.
  if (!o.quick && o.resultsDir === officialDir) fs.writeFileSync(page, replaceMarkedBlock(fs.readFileSync(page, 'utf8'), table));
  console.log(`\n${table}\n`);
  for (const x of outcome) console.log(`${x.name.padEnd(12)} ${x.status}`);
  console.log(`table written to ${path.join(o.resultsDir, 'measured.md')}${!o.quick && o.resultsDir === officialDir ? ' and docs/performance.md' : ''}`);
  if (outcome.some((x) => x.status.startsWith('FAILED'))) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});

import '../local-stack/apply-stack-env';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { loadStackConfig } from '../local-stack/stack-config';
import { stackDown, stackUp } from '../local-stack/stack';
import { commandLine, saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';
import { checkHeld, figureRows, FIGURES, formatTable, type BenchKind, type RunRecord, type TemporalServerKind } from './support/temporal-server-figures';

// bench:relay, bench:pipeline and the memory soak on the Temporal dev server and on Temporal's
// multi-process cluster (TEMPORAL_SERVER=cluster, docs/temporal-server.md) in one run. Only
// Temporal is switched (stack down temporal, stack up with the other TEMPORAL_SERVER): the same
// PostgreSQL and Kafka serve both. The servers alternate by round (dev then cluster, then cluster
// then dev, …), so a machine that gets busier or quieter during the run weighs on both alike and
// a switch is saved at each round's boundary; each figure is the median of its rounds. The
// memory soak runs once per server, in the first round. Each benchmark runs as its own process,
// exactly as its npm script runs it, and saves its own JSON under the cache
// (.cache/bench-temporal-servers/<time>/); this run reads its figures from there and writes one
// JSON + chart: tools/bench/results/temporal-servers.json (BENCH_RESULT_NAME to rename).
//   npm run bench:temporal-servers     (about 25 minutes on a quiet 2-core machine at the defaults)
// Settings: BENCH_ROUNDS (2); BENCH_RELAY_EVENTS (50,000; bench:relay with BENCH_QUICK=1: one
// run per mode); BENCH_PIPELINE_SECONDS (15) and BENCH_PIPELINE_REPEATS (1 per round, the defaults
// variant); BENCH_SOAK_MINUTES (3; the soak's own default is 30). The starting TEMPORAL_SERVER is
// brought back up at the end.

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const RELAY_EVENTS = Number(process.env.BENCH_RELAY_EVENTS ?? 50_000);
const PIPELINE_SECONDS = Number(process.env.BENCH_PIPELINE_SECONDS ?? 15);
const PIPELINE_REPEATS = Number(process.env.BENCH_PIPELINE_REPEATS ?? 1);
const SOAK_MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 3);
const RESULT_NAME = process.env.BENCH_RESULT_NAME ?? 'temporal-servers';
const SERVERS: TemporalServerKind[] = ['dev', 'cluster'];
const log = (m: string) => console.log(`[temporal-servers] ${m}`);

/** What each benchmark is run with: its npm script's file and the settings this run gives it. */
function benchCommand(bench: BenchKind, name: string): { file: string; env: Record<string, string>; timeoutMs: number } {
  if (bench === 'relay') return { file: 'relay.bench.ts', env: { BENCH_QUICK: '1', BENCH_EVENTS: String(RELAY_EVENTS), BENCH_NAME: name }, timeoutMs: 20 * 60_000 };
  if (bench === 'pipeline') return { file: 'pipeline.bench.ts', env: { BENCH_VARIANTS: 'defaults', SECONDS: String(PIPELINE_SECONDS), BENCH_REPEATS: String(PIPELINE_REPEATS) }, timeoutMs: 20 * 60_000 };
  return { file: 'memory-soak.ts', env: { BENCH_MINUTES: String(SOAK_MINUTES), BENCH_RESULT_NAME: name }, timeoutMs: (SOAK_MINUTES + 20) * 60_000 };
}

/** Runs one benchmark as a child process (its own process group, killed whole past its bound). */
function runChild(file: string, env: Record<string, string>, timeoutMs: number, logFile: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const out = fs.openSync(logFile, 'w');
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(PROJECT_ROOT, 'tools', 'bench', file)], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', out, out],
      detached: true,
    });
    const timer = setTimeout(() => {
      log(`${file} ran past ${timeoutMs / 60_000} min: stopping it`);
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      fs.closeSync(out);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

/** Stops whichever Temporal runs and starts `server` (PostgreSQL and Kafka stay up). */
async function switchTo(server: TemporalServerKind) {
  const started = Date.now();
  const config = loadStackConfig({ ...process.env, TEMPORAL_SERVER: server });
  await stackDown(config, ['temporal']);
  await stackUp(config, (m) => log(`[stack] ${m}`));
  log(`Temporal is now ${server} (switch ${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

async function main() {
  const startedAt = Date.now();
  const loadAtStart = os.loadavg().map((l) => +l.toFixed(2));
  const initial = (process.env.TEMPORAL_SERVER ?? 'dev') as string;
  const base = loadStackConfig();
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const runDir = path.join(base.local.cacheDir, 'bench-temporal-servers', stamp);
  fs.mkdirSync(runDir, { recursive: true });
  log(`${ROUNDS} rounds; relay ${RELAY_EVENTS.toLocaleString('en')} events (quick), pipeline ${PIPELINE_SECONDS} s × ${PIPELINE_REPEATS}, memory soak ${SOAK_MINUTES} min once per server; logs and each benchmark's own JSON in ${runDir}; load ${loadAtStart.join(' ')}`);

  const runs: RunRecord[] = [];
  let current: TemporalServerKind | undefined;
  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? SERVERS : [...SERVERS].reverse();
    for (const server of order) {
      if (server !== current) {
        await switchTo(server);
        current = server;
      }
      const benches: BenchKind[] = round === 1 ? ['relay', 'pipeline', 'memory-soak'] : ['relay', 'pipeline'];
      for (const bench of benches) {
        const name = `${bench}-${server}-round-${round}`;
        const dir = path.join(runDir, name);
        fs.mkdirSync(dir, { recursive: true });
        const { file, env, timeoutMs } = benchCommand(bench, name);
        const t0 = Date.now();
        log(`round ${round}, ${server}: ${bench} (log ${path.join(dir, 'output.log')})`);
        const exitCode = await runChild(file, { ...env, TEMPORAL_SERVER: server, BENCH_RESULTS_DIR: dir }, timeoutMs, path.join(dir, 'output.log'));
        const resultFile = fs.readdirSync(dir).find((f) => f.endsWith('.json'));
        const result = resultFile ? (JSON.parse(fs.readFileSync(path.join(dir, resultFile), 'utf8')) as unknown) : undefined;
        const figures: Record<string, number> = {};
        for (const f of FIGURES.filter((x) => x.bench === bench)) {
          const v = result === undefined ? undefined : f.read(result);
          if (v !== undefined) figures[f.key] = v;
        }
        const record: RunRecord = { server, round, bench, seconds: Math.round((Date.now() - t0) / 1000), exitCode, resultFile: resultFile && path.relative(PROJECT_ROOT, path.join(dir, resultFile)), figures, checkHeld: result === undefined ? undefined : checkHeld(bench, result) };
        runs.push(record);
        log(`  ${bench} on ${server}: exit ${exitCode} in ${record.seconds} s; ${JSON.stringify(figures)}${record.checkHeld === false ? '; its end-to-end check FAILED' : ''}`);
      }
    }
  }
  if (current !== initial && (initial === 'dev' || initial === 'cluster')) await switchTo(initial);

  const rows = figureRows(runs);
  const minutes = +((Date.now() - startedAt) / 60_000).toFixed(1);
  const loadAtEnd = os.loadavg().map((l) => +l.toFixed(2));
  const failed = runs.filter((r) => r.exitCode !== 0 || r.checkHeld === false);
  console.log(`\n${formatTable(rows)}\n`);
  console.log(`${runs.length} benchmark runs in ${minutes} min; load ${loadAtStart.join(' ')} → ${loadAtEnd.join(' ')}${failed.length > 0 ? `; FAILED: ${failed.map((r) => `${r.bench} on ${r.server} round ${r.round}`).join(', ')}` : ''}`);
  const written = await saveBenchmark({
    name: RESULT_NAME,
    command: commandLine('bench:temporal-servers'),
    settings: {
      servers: { dev: 'Temporal CLI dev server (SQLite, 1 history shard, one process)', cluster: 'TEMPORAL_SERVER=cluster: 2 frontends behind a TCP balancer, 2 history hosts on 8 shards, matching, worker, SQL visibility on PostgreSQL' },
      rounds: ROUNDS,
      order: 'alternating by round: dev, cluster; then cluster, dev; …; only Temporal restarted between servers',
      relay: { script: 'bench:relay', env: benchCommand('relay', 'relay').env },
      pipeline: { script: 'bench:pipeline', env: benchCommand('pipeline', 'pipeline').env },
      memorySoak: { script: 'bench:memory-soak', env: benchCommand('memory-soak', 'memory-soak').env, runs: 'once per server, in the first round' },
      figures: 'medians over the rounds of each benchmark\'s own summary figure',
      minutes,
      loadAverageAtStart: loadAtStart,
      loadAverageAtEnd: loadAtEnd,
      benchmarkOutputs: path.relative(PROJECT_ROOT, runDir),
    },
    results: { table: rows, runs, failed: failed.length },
    chart: {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: `Temporal dev server vs cluster, same machine, one run (medians of ${ROUNDS} rounds; load ${loadAtStart[0]} on ${os.cpus().length} cores)`,
      data: { values: rows.flatMap((r) => SERVERS.map((s) => ({ figure: `${r.label} (${r.unit})`, server: s, value: r[s].median ?? null }))) },
      columns: 3,
      facet: { field: 'figure', type: 'nominal', title: null, sort: rows.map((r) => `${r.label} (${r.unit})`), header: { labelLimit: 0, labelFontSize: 11 } },
      spec: {
        mark: 'bar',
        encoding: {
          x: { field: 'server', type: 'nominal', title: null, sort: SERVERS },
          y: { field: 'value', type: 'quantitative', title: null },
          color: { field: 'server', type: 'nominal', title: null, sort: SERVERS },
        },
        width: 200,
        height: 120,
      },
      resolve: { scale: { y: 'independent' } },
    },
  });
  console.log(`saved: ${written.join(', ')}`);
  if (failed.length > 0) process.exitCode = 1;
}

runBenchmark(main);

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median } from './support/report';

// What the relay and the consumer ask of PostgreSQL, Kafka and Temporal per event, and the CPU
// their worker process spends per event, for two checkouts of the project side by side: counts of
// work, which a loaded machine changes far less than it changes wall-clock figures. Each run
// (tools/bench/support/work-counts-workload.ts) starts a fresh worker from its tree, against that
// tree's own local stack, lets it settle, and counts from the first event committed (relay) or
// produced (consumer) until the last is published or applied. Runs alternate between the trees,
// the first tree changing each repeat (ABBA…), and the report gives medians.
//
//   WORK_COUNTS_BEFORE=/path/to/old/checkout WORK_COUNTS_BEFORE_ENV=/path/to/its/stack-env npm run bench:work-counts
//
// WORK_COUNTS_BEFORE_ENV is a file of `export NAME=value` lines (like .stack-env) giving the other
// tree's stack; this tree's comes from the environment. Optional: WORK_COUNTS_REPEATS (3),
// WORK_COUNTS_EVENTS (50000), WORK_COUNTS_SCENARIOS (relay-session,relay-local,relay-trickle,consumer;
// relay-trickle: WORK_COUNTS_TRICKLE_EVENTS (10000) at 1,000/s, 10 per transaction, where
// per-batch costs show),
// WORK_COUNTS_OUT (the JSON report; default .cache/work-counts.json). Wall-clock seconds are in
// the report too, for a quiet machine; on a loaded one read the counts.

const here = path.resolve(__dirname, '..', '..');
const beforeRoot = process.env.WORK_COUNTS_BEFORE;
if (!beforeRoot) throw new Error('WORK_COUNTS_BEFORE must name the checkout to compare with (its node_modules installed, its stack up)');
const REPEATS = Number(process.env.WORK_COUNTS_REPEATS ?? 3);
const EVENTS = Number(process.env.WORK_COUNTS_EVENTS ?? 50_000);
// At 1,000 events/s: 10 s of trickle.
const TRICKLE_EVENTS = Number(process.env.WORK_COUNTS_TRICKLE_EVENTS ?? 10_000);
const eventsOf = (scenario: string) => (scenario === 'relay-trickle' ? TRICKLE_EVENTS : EVENTS);
const SCENARIOS = (process.env.WORK_COUNTS_SCENARIOS ?? 'relay-session,relay-local,relay-trickle,consumer').split(',').filter(Boolean);
const OUT = process.env.WORK_COUNTS_OUT ?? path.join(here, '.cache', 'work-counts.json');
const COUNTER = path.join(here, 'tools', 'bench', 'support', 'work-counter.cjs');
const WORKLOAD = path.join(here, 'tools', 'bench', 'support', 'work-counts-workload.ts');

/** `export NAME=value` lines (quotes stripped), as a stack-env file sets them. */
function readEnvFile(file: string | undefined): Record<string, string> {
  if (!file) return {};
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^\s*(?:export\s+)?([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line);
    if (m) env[m[1]!] = m[2]!.replace(/^(['"])(.*)\1$/, '$2');
  }
  return env;
}

const trees = [
  { label: 'before', root: path.resolve(beforeRoot), env: readEnvFile(process.env.WORK_COUNTS_BEFORE_ENV) },
  { label: 'after', root: here, env: {} as Record<string, string> },
];

type RunResult = {
  scenario: string;
  events: number;
  seconds: number;
  loadAverage1m: number;
  pgTransactions: number;
  worker: { pgQueries: number; pgByText: Record<string, number>; kafkaRequests: number; kafkaByApi: Record<string, number>; cpuMicros: number };
  temporal: { runs: number; workflowTasks: number; activityTasks: number; localActivities: number; historyEvents: number };
};

function runOnce(tree: (typeof trees)[number], scenario: string): Promise<RunResult> {
  const countsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'work-counts-'));
  // This tree's own stack variables must not leak into the other's run.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !(tree.label === 'before' && (k.startsWith('LOCAL_') || k === 'OUTBOX_CACHE_DIR' || k === 'METRICS_PORT_BASE'))));
  const env = { ...inherited, ...tree.env, WORK_COUNTS_DIR: countsDir, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${COUNTER}`.trim() };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', WORKLOAD, scenario, String(eventsOf(scenario))], { cwd: tree.root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      fs.rmSync(countsDir, { recursive: true, force: true });
      const line = out.split('\n').find((l) => l.startsWith('WORK_COUNTS '));
      if (code === 0 && line) resolve(JSON.parse(line.slice('WORK_COUNTS '.length)) as RunResult);
      else reject(new Error(`${tree.label} ${scenario} exited ${code}:\n${err.slice(-3000)}\n${out.slice(-2000)}`));
    });
  });
}

/**
 * Per-event figures of one run (per 1,000 events for the small ones, to keep them readable), and
 * per batch (a produce request is one batch): at a trickle the batches' size follows how quickly
 * the relay keeps up, so per-event counts move with the machine's load and per-batch ones do not.
 */
function perEvent(r: RunResult) {
  const k = 1000 / r.events;
  const batches = r.worker.kafkaByApi.Produce ?? 0;
  return {
    cpuMicrosPerEvent: +(r.worker.cpuMicros / r.events).toFixed(1),
    pgQueriesPer1k: +(r.worker.pgQueries * k).toFixed(1),
    pgTransactionsPer1k: +(r.pgTransactions * k).toFixed(1),
    kafkaRequestsPer1k: +(r.worker.kafkaRequests * k).toFixed(1),
    kafkaProducePer1k: +((r.worker.kafkaByApi.Produce ?? 0) * k).toFixed(2),
    workflowTasksPer1k: +(r.temporal.workflowTasks * k).toFixed(2),
    activityTasksPer1k: +(r.temporal.activityTasks * k).toFixed(2),
    localActivitiesPer1k: +(r.temporal.localActivities * k).toFixed(2),
    historyEventsPer1k: +(r.temporal.historyEvents * k).toFixed(2),
    batches,
    pgQueriesPerBatch: batches > 0 ? +(r.worker.pgQueries / batches).toFixed(2) : 0,
    seconds: r.seconds,
  };
}

async function main() {
  console.log(`work counts: ${SCENARIOS.join(', ')}, ${EVENTS} events (trickle ${TRICKLE_EVENTS}), ${REPEATS} repeats; before ${trees[0]!.root}, after ${trees[1]!.root}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const runs: (RunResult & { tree: string; repeat: number })[] = [];
  for (let r = 0; r < REPEATS; r++) {
    for (const scenario of SCENARIOS) {
      for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
        const result = await runOnce(tree, scenario);
        runs.push({ ...result, tree: tree.label, repeat: r });
        console.log(`${scenario.padEnd(13)} ${tree.label.padEnd(6)} #${r + 1}: ${JSON.stringify(perEvent(result))} load ${result.loadAverage1m}`);
      }
    }
  }
  const summary: Record<string, Record<string, Record<string, number>>> = {};
  for (const scenario of SCENARIOS) {
    summary[scenario] = {};
    for (const tree of trees) {
      const mine = runs.filter((x) => x.scenario === scenario && x.tree === tree.label).map(perEvent);
      summary[scenario]![tree.label] = Object.fromEntries(Object.keys(mine[0]!).map((key) => [key, median(mine.map((m) => m[key as keyof typeof m]))]));
    }
    console.log(`\n${scenario}: medians of ${REPEATS}`);
    console.table(summary[scenario]);
  }
  // Where the statements went: the worker's queries by text, median per 1,000 events, for each tree.
  const byText: Record<string, Record<string, Record<string, number>>> = {};
  for (const scenario of SCENARIOS) {
    byText[scenario] = {};
    const texts = new Set(runs.filter((x) => x.scenario === scenario).flatMap((x) => Object.keys(x.worker.pgByText)));
    for (const text of texts) {
      byText[scenario]![text] = Object.fromEntries(
        trees.map((t) => [t.label, +median(runs.filter((x) => x.scenario === scenario && x.tree === t.label).map((x) => ((x.worker.pgByText[text] ?? 0) * 1000) / x.events)).toFixed(2)]),
      );
    }
  }
  fs.mkdirSync(path.dirname(OUT), { recursive: true });
  fs.writeFileSync(OUT, JSON.stringify({ events: EVENTS, trickleEvents: TRICKLE_EVENTS, repeats: REPEATS, loadAverage: os.loadavg(), summary, pgQueriesPer1kByText: byText, runs }, null, 2));
  console.log(`\nfull report (every run, queries by text): ${OUT}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Command } from 'commander';
import { Client as PgClient, type Pool, type PoolClient } from 'pg';
import { loadStackConfig, type StackConfig as Config } from '../local-stack/stack-config';
import { migrate } from '../../src/db/migrate';
import { createPool, inTransaction } from '../../src/db/pool';
import { FETCH_PENDING_IDS_SQL, FROM_THE_BEGINNING } from '../../src/outbox/queries/fetch-pending-ids';
import { databaseTimeAgo } from '../../src/retention/database-clock';
import { planOutboxWalk } from '../../src/retention/plan-outbox-walk';
import { deletePublishedRange } from '../../src/retention/queries/delete-published-range';
import { sweepPublishedOutbox } from '../../src/retention/sweep-published-outbox';
import { percentile, saveBenchmark } from './support/report';
import { seedSceneChunk, syncOutboxIdentity, type SceneShape } from '../../test/kit/seed-scene-rows';

// What makes the relay's poll slow while retention runs? The scene (tools/bench/seed-scene.ts) shows
// that it is; this takes it apart. On one table it times the relay's poll, back to back with a
// pause, while one of these runs beside it for a few seconds:
//   idle           nothing (the machine's own noise)
//   cpu            a PostgreSQL backend burning one core (generate_series): CPU only, no I/O, no locks
//   read           the sweep's key ranges read, not deleted (same pages, same index descents): no WAL, no row locks
//   delete ...     the real sweep (sweepPublishedOutbox): batch size and pause as named
//   delete-sync    the same deletes with synchronous_commit on: each commit waits for its WAL fsync
// Phases are interleaved over several rounds so the machine's changing load hits all of them.
// After each delete phase the deleted ids are re-inserted and the table vacuumed, so every phase
// starts from the same table.

const program = new Command('seed-scene-interference')
  .option('--rows <n>', 'outbox rows in the table', (v) => Number(v), 2_000_000)
  .option('--seconds <n>', 'length of each phase', (v) => Number(v), 4)
  .option('--rounds <n>', 'times every phase runs, interleaved', (v) => Number(v), 2)
  .option('--poll-every-ms <n>', 'pause between timed relay polls', (v) => Number(v), 10)
  .option('--phases <list>', 'comma-separated subset of the phases', '')
  .option('--database <name>', 'database to (re)create', 'outbox_scene_interference')
  .parse();
const opts = program.opts<{ rows: number; seconds: number; rounds: number; pollEveryMs: number; phases: string; database: string }>();

type Phase =
  | { name: string; kind: 'idle' }
  | { name: string; kind: 'cpu' }
  | { name: string; kind: 'read' }
  | { name: string; kind: 'delete'; batchSize: number; pauseMs: number; synchronousCommit: boolean };

const ALL_PHASES: Phase[] = [
  { name: 'idle', kind: 'idle' },
  { name: 'cpu', kind: 'cpu' },
  { name: 'read 10k', kind: 'read' },
  { name: 'delete 10k', kind: 'delete', batchSize: 10_000, pauseMs: 0, synchronousCommit: false },
  { name: 'delete-sync 10k', kind: 'delete', batchSize: 10_000, pauseMs: 0, synchronousCommit: true },
  { name: 'delete 10k pause 10', kind: 'delete', batchSize: 10_000, pauseMs: 10, synchronousCommit: false },
  { name: 'delete 10k pause 20', kind: 'delete', batchSize: 10_000, pauseMs: 20, synchronousCommit: false },
  { name: 'delete 5k pause 5', kind: 'delete', batchSize: 5_000, pauseMs: 5, synchronousCommit: false },
  { name: 'delete 5k pause 10', kind: 'delete', batchSize: 5_000, pauseMs: 10, synchronousCommit: false },
  { name: 'delete 2k pause 2', kind: 'delete', batchSize: 2_000, pauseMs: 2, synchronousCommit: false },
];

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function recreateDatabase(baseUrl: string, name: string) {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`--database ${name}: use lower-case letters, digits and _`);
  const admin = new PgClient({ connectionString: withDatabase(baseUrl, 'postgres') });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
}

async function seedIds(pool: Pool, shape: SceneShape, now: Date, fromId: number, toId: number) {
  const client = await pool.connect();
  try {
    await client.query('SET synchronous_commit = off');
    for (let lo = fromId; lo <= toId; lo += 250_000) await seedSceneChunk(client, shape, { fromId: lo, toId: Math.min(toId, lo + 249_999) }, now);
  } finally {
    client.release();
  }
}

/**
 * Back-to-back relay polls on their own connection, each timed from the client, until stopped.
 * Every other poll runs as EXPLAIN (ANALYZE, TIMING OFF), which also gives the time PostgreSQL
 * spent planning and executing it: a lock wait, a WAL or buffer wait, an I/O read would all be
 * inside that time. A long client time around a short server time is time spent outside the
 * query: waiting to be scheduled on a busy CPU (the backend waking up, the client's event loop).
 */
function pollLoop(pool: Pool, config: Config, everyMs: number) {
  const samples: number[] = [];
  const server: { clientMs: number; serverMs: number }[] = [];
  let running = true;
  const done = (async () => {
    const client = await pool.connect();
    try {
      for (let i = 0, shard = 0; running; i++, shard = (shard + 1) % config.relay.shards) {
        const params = [config.relay.shards, shard, config.relay.batchSize, FROM_THE_BEGINNING];
        const start = performance.now();
        if (i % 2 === 0) {
          await client.query(FETCH_PENDING_IDS_SQL, params);
          samples.push(performance.now() - start);
        } else {
          const { rows } = await client.query<{ 'QUERY PLAN': [{ 'Planning Time': number; 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${FETCH_PENDING_IDS_SQL}`, params);
          const plan = rows[0]!['QUERY PLAN'][0];
          server.push({ clientMs: performance.now() - start, serverMs: plan['Planning Time'] + plan['Execution Time'] });
        }
        await new Promise((r) => setTimeout(r, everyMs));
      }
    } finally {
      client.release();
    }
  })();
  return { samples, server, stop: async () => ((running = false), done) };
}

async function walBytes(client: PoolClient | Pool): Promise<bigint> {
  const { rows } = await client.query<{ lsn: string }>(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text AS lsn`);
  return BigInt(rows[0]!.lsn.split('.')[0]!);
}

interface Walk {
  cutoff: Date;
  fromId: number;
  untilId: number;
}

/** Runs the phase's background load until the deadline; returns rows deleted (or read) and the first id not visited. */
async function background(pool: Pool, phase: Phase, walk: Walk, deadline: number): Promise<{ rows: number; nextId: number; batches: number }> {
  if (phase.kind === 'idle') {
    await new Promise((r) => setTimeout(r, deadline - Date.now()));
    return { rows: 0, nextId: walk.fromId, batches: 0 };
  }
  if (phase.kind === 'cpu') {
    let batches = 0;
    while (Date.now() < deadline) {
      await pool.query(`SELECT count(*) FROM generate_series(1, 1000000)`);
      batches++;
    }
    return { rows: 0, nextId: walk.fromId, batches };
  }
  if (phase.kind === 'read') {
    let nextId = walk.fromId;
    let rows = 0;
    let batches = 0;
    while (Date.now() < deadline) {
      const toId = Math.min(nextId + 10_000, walk.untilId);
      const r = await pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE id >= $1::bigint AND id < $2::bigint AND published_at < $3::timestamptz`,
        [nextId, toId, walk.cutoff],
      );
      rows += r.rows[0]!.n;
      batches++;
      // Nothing is consumed: start over at the end, so the phase lasts as long as the others.
      nextId = toId < walk.untilId ? toId : walk.fromId;
    }
    return { rows, nextId, batches };
  }
  if (!phase.synchronousCommit) {
    const result = await sweepPublishedOutbox(pool, { ...walk, batchSize: phase.batchSize, pauseMs: phase.pauseMs, deadline });
    return { rows: result.deleted, nextId: result.nextId, batches: result.batches };
  }
  // The sweep's loop with one difference: every commit waits for its WAL to reach the disk.
  let nextId = walk.fromId;
  let rows = 0;
  let batches = 0;
  while (Date.now() < deadline && nextId < walk.untilId) {
    const toId = Math.min(nextId + phase.batchSize, walk.untilId);
    rows += await inTransaction(pool, async (tx) => {
      await tx.query(`SET LOCAL synchronous_commit = on`);
      return deletePublishedRange(tx, { fromId: nextId, toId, cutoff: walk.cutoff });
    });
    batches++;
    nextId = toId;
    if (phase.pauseMs) await new Promise((r) => setTimeout(r, phase.pauseMs));
  }
  return { rows, nextId, batches };
}

interface PhaseRun {
  phase: string;
  round: number;
  seconds: number;
  rows: number;
  rowsPerSecond: number;
  batches: number;
  walMB: number;
  polls: number[];
  eventLoopP99Ms: number;
  load1: number;
  /** The EXPLAIN ANALYZE polls: client-measured and server-side (planning + execution) time. */
  explained: { clientMs: number; serverMs: number }[];
}

async function main() {
  const base = loadStackConfig();
  const url = withDatabase(base.database.url, opts.database);
  const config = loadStackConfig({ ...process.env, DATABASE_URL: url });
  const wanted = opts.phases ? opts.phases.split(',').map((s) => s.trim()) : undefined;
  const phases = wanted ? ALL_PHASES.filter((p) => wanted.includes(p.name)) : ALL_PHASES;
  if (phases.length === 0) throw new Error(`--phases: none of ${opts.phases} is one of ${ALL_PHASES.map((p) => p.name).join(', ')}`);
  // Old rows only, 50 pending at the end, none parked: every deleted id can be re-inserted as it was.
  const shape: SceneShape = { rows: opts.rows, perDay: 50_000, pending: 50, parked: 0 };
  const now = new Date();

  console.log(`interference: ${shape.rows.toLocaleString()} rows in ${opts.database}; ${phases.length} phases × ${opts.rounds} rounds × ${opts.seconds} s; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  await recreateDatabase(base.database.url, opts.database);
  await migrate(url);
  const pool = createPool(url, { max: 4, application_name: 'scene-interference', statement_timeout: 0 });
  const runs: PhaseRun[] = [];
  try {
    let t0 = performance.now();
    await seedIds(pool, shape, now, 1, shape.rows);
    await syncOutboxIdentity(pool);
    await pool.query('VACUUM (ANALYZE) temporal_outbox.outbox_events');
    console.log(`seeded and vacuumed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const cutoff = await databaseTimeAgo(pool, config.retention.windowMs);
    const planned = await planOutboxWalk(pool, cutoff);
    const walk: Walk = { cutoff, fromId: planned.fromId!, untilId: planned.untilId! };

    for (let round = 1; round <= opts.rounds; round++) {
      for (const phase of phases) {
        await pool.query('CHECKPOINT').catch(() => undefined); // every phase starts with no dirty pages to flush
        const wal0 = await walBytes(pool);
        const loop = monitorEventLoopDelay({ resolution: 5 });
        loop.enable();
        const poll = pollLoop(pool, config, opts.pollEveryMs);
        t0 = performance.now();
        const done = await background(pool, phase, walk, Date.now() + opts.seconds * 1000);
        const seconds = (performance.now() - t0) / 1000;
        await poll.stop();
        loop.disable();
        const wal = Number((await walBytes(pool)) - wal0) / 2 ** 20;
        const sorted = [...poll.samples].sort((a, b) => a - b);
        const run: PhaseRun = {
          phase: phase.name,
          round,
          seconds,
          rows: done.rows,
          rowsPerSecond: Math.round(done.rows / seconds),
          batches: done.batches,
          walMB: Math.round(wal * 10) / 10,
          polls: poll.samples,
          eventLoopP99Ms: loop.percentile(99) / 1e6,
          load1: os.loadavg()[0]!,
          explained: poll.server,
        };
        runs.push(run);
        console.log(
          `round ${round} ${phase.name.padEnd(20)} ${seconds.toFixed(1)} s  ${String(run.rowsPerSecond).padStart(7)} rows/s  WAL ${run.walMB} MB  ` +
            `poll p50 ${percentile(sorted, 50).toFixed(2)} p99 ${percentile(sorted, 99).toFixed(2)} max ${percentile(sorted, 100).toFixed(2)} ms (${sorted.length})  ` +
            `event loop p99 ${run.eventLoopP99Ms.toFixed(1)} ms  load ${run.load1.toFixed(2)}  explained polls p99: client ${p99(run.explained.map((e) => e.clientMs)).toFixed(2)} server ${p99(run.explained.map((e) => e.serverMs)).toFixed(2)} ms`,
        );
        if (phase.kind === 'delete' && done.rows > 0) {
          // Rows published just after the cutoff stay behind near the walk's end: clear the
          // range first so it can be re-seeded exactly as it was.
          await pool.query(`DELETE FROM temporal_outbox.outbox_events WHERE id >= $1 AND id < $2`, [walk.fromId, done.nextId]);
          await seedIds(pool, shape, now, walk.fromId, done.nextId - 1);
          await pool.query('VACUUM temporal_outbox.outbox_events');
        }
      }
    }
  } finally {
    await pool.end();
  }

  const summary = phases.map((phase) => {
    const mine = runs.filter((r) => r.phase === phase.name);
    const polls = mine.flatMap((r) => r.polls).sort((a, b) => a - b);
    const seconds = mine.reduce((s, r) => s + r.seconds, 0);
    return {
      phase: phase.name,
      rowsPerSecond: Math.round(mine.reduce((s, r) => s + r.rows, 0) / seconds),
      walMBPerSecond: Math.round((mine.reduce((s, r) => s + r.walMB, 0) / seconds) * 10) / 10,
      polls: polls.length,
      pollMsP50: round2(percentile(polls, 50)),
      pollMsP99: round2(percentile(polls, 99)),
      pollMsMax: round2(percentile(polls, 100)),
      eventLoopP99Ms: round2(Math.max(...mine.map((r) => r.eventLoopP99Ms))),
      load1: mine.map((r) => round2(r.load1)),
      explainedPollClientMsP99: round2(p99(mine.flatMap((r) => r.explained.map((e) => e.clientMs)))),
      explainedPollServerMsP99: round2(p99(mine.flatMap((r) => r.explained.map((e) => e.serverMs)))),
    };
  });
  const idle = summary.find((s) => s.phase === 'idle')?.pollMsP99;
  console.log('\nphase                 rows/s     WAL MB/s  poll p50   p99    max     p99 ÷ idle p99');
  for (const s of summary) {
    console.log(
      `${s.phase.padEnd(20)} ${String(s.rowsPerSecond).padStart(8)} ${String(s.walMBPerSecond).padStart(9)} ${s.pollMsP50.toFixed(2).padStart(8)} ${s.pollMsP99.toFixed(2).padStart(6)} ${s.pollMsMax.toFixed(2).padStart(7)}   ${idle ? (s.pollMsP99 / idle).toFixed(1) + '×' : '-'}   server p99 ${s.explainedPollServerMsP99.toFixed(2)} of client ${s.explainedPollClientMsP99.toFixed(2)}`,
    );
  }
  const files = await saveBenchmark({
    name: `retention-interference-${opts.rows}`,
    command: `npm run scene:interference -- ${process.argv.slice(2).join(' ')}`.trim(),
    settings: { rows: opts.rows, seconds: opts.seconds, rounds: opts.rounds, pollEveryMs: opts.pollEveryMs, relayShards: config.relay.shards, relayBatchSize: config.relay.batchSize },
    results: {
      summary,
      runs: runs.map(({ polls, explained, ...r }) => ({
        ...r,
        polls: polls.length,
        pollMsP99: round2(p99(polls)),
        explainedPollClientMsP99: round2(p99(explained.map((e) => e.clientMs))),
        explainedPollServerMsP99: round2(p99(explained.map((e) => e.serverMs))),
      })),
    },
    chart: {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: 'Relay poll p99 beside each kind of background load (all rounds pooled)',
      width: 600,
      height: 300,
      data: { values: summary },
      mark: 'bar',
      encoding: {
        y: { field: 'phase', type: 'nominal', sort: null, title: null },
        x: { field: 'pollMsP99', type: 'quantitative', title: 'relay poll p99 (ms)' },
        tooltip: [{ field: 'rowsPerSecond' }, { field: 'pollMsP50' }, { field: 'pollMsMax' }],
      },
    },
  });
  console.log(`\nresults: ${files.join(', ')}`);
}

function p99(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 99);
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

import os from 'node:os';
import { Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import { Client as PgClient, type Pool } from 'pg';
import { Client, Connection } from '@temporalio/client';
import { loadStackConfig, type StackConfig as Config } from '../local-stack/stack-config';
import { migrate } from '../../src/db/migrate';
import { createPool } from '../../src/db/pool';
import { CREATE_PENDING_INDEX_SQL } from '../../src/doctor/checks/pending-index';
import { formatReport } from '../../src/doctor/format-report';
import { runDoctor, type DoctorReport } from '../../src/doctor/run-doctor';
import { FETCH_PENDING_IDS_SQL, FROM_THE_BEGINNING } from '../../src/outbox/queries/fetch-pending-ids';
import { databaseTimeAgo } from '../../src/retention/database-clock';
import { planOutboxWalk } from '../../src/retention/plan-outbox-walk';
import { ensureRetentionSchedule } from '../../src/retention/schedule';
import { sweepPublishedOutbox, type SweepBatch } from '../../src/retention/sweep-published-outbox';
import { median, percentile, saveBenchmark } from './support/report';
import { seedSceneChunk, syncOutboxIdentity, type SceneShape } from '../../test/kit/seed-scene-rows';

// The seed's first scene, reproduced in one command, in a database of its own (outbox_scene):
//   1. an outbox 8 months × 50,000 events/day = 12,000,000 rows, 50 pending, never cleaned,
//      without the relay's partial index (as in the seed);
//   2. the doctor flags it;
//   3. the doctor's fixes: the partial index, then retention clears the backlog with the
//      retention activity's own code while a loop runs the relay's poll and times it;
//   4. the doctor again: healthy.
// Results: tools/bench/results/retention-scene*.json and a chart of batch time and poll latency.

const program = new Command('seed-scene')
  .option('--rows <n>', 'outbox rows to build', (v) => Number(v), 12_000_000)
  .option('--per-day <n>', 'events per day', (v) => Number(v), 50_000)
  .option('--pending <n>', 'rows still pending', (v) => Number(v), 50)
  .option('--parked <n>', 'rows parked long ago (must survive retention)', (v) => Number(v), 5)
  .option('--batch-size <n>', 'retention ids per batch (default: RETENTION_BATCH_SIZE)', (v) => Number(v))
  .option('--pause-ms <n>', 'rest between retention batches, leaving room for the relay (default: RETENTION_BATCH_PAUSE_MS)', (v) => Number(v))
  .option('--poll-every-ms <n>', 'pause between timed relay polls during the cleanup', (v) => Number(v), 10)
  .option('--keep-index', 'seed with the partial index in place (skip the missing-index part)')
  .option('--database <name>', 'database to (re)create for the scene', 'outbox_scene')
  .parse();

const opts = program.opts<{ rows: number; perDay: number; pending: number; parked: number; batchSize?: number; pauseMs?: number; pollEveryMs: number; keepIndex?: boolean; database: string }>();
const SCENE_SCHEDULE_ID = 'outbox-retention-scene';

function step(title: string) {
  console.log(`\n=== ${title}`);
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Progress goes to stdout with everything else, so `npm run scene:seed > scene.log` (or CI) keeps
 * it; a non-terminal gets whole lines every few seconds (noTTYOutput) instead of redraws.
 */
const TTY = process.stdout.isTTY === true;
function progressBar(format: string, notTTYSchedule: number) {
  return new SingleBar({ stream: process.stdout, noTTYOutput: true, notTTYSchedule, format, hideCursor: true }, Presets.shades_classic);
}

/** A "still working" line for steps with no countable progress (VACUUM, CREATE INDEX). */
async function timed<T>(label: string, work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t0 = performance.now();
  // A terminal gets a counter redrawn in place every second; a log gets a line every 10 s.
  const tick = setInterval(
    () => process.stdout.write(`${TTY ? '\r' : ''}${label} … ${((performance.now() - t0) / 1000).toFixed(0)} s${TTY ? '' : '\n'}`),
    TTY ? 1_000 : 10_000,
  );
  try {
    const value = await work();
    const ms = performance.now() - t0;
    process.stdout.write(`${TTY ? '\r' : ''}${label}: ${(ms / 1000).toFixed(1)} s\n`);
    return { value, ms };
  } finally {
    clearInterval(tick);
  }
}

async function recreateDatabase(baseUrl: string, name: string) {
  const admin = new PgClient({ connectionString: withDatabase(baseUrl, 'postgres') });
  await admin.connect();
  try {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`--database ${name}: use lower-case letters, digits and _`);
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
}

async function seed(pool: Pool, shape: SceneShape): Promise<{ ms: number }> {
  const client = await pool.connect();
  const bar = progressBar('seeding  [{bar}] {percentage}% | {value}/{total} rows | {rate} rows/s | ETA {eta_formatted}', 10_000);
  const t0 = performance.now();
  try {
    // A crash would only lose seed rows; not waiting for each chunk's WAL flush is worth it.
    await client.query('SET synchronous_commit = off');
    const now = new Date();
    const chunk = 250_000;
    bar.start(shape.rows, 0, { rate: 0 });
    for (let fromId = 1; fromId <= shape.rows; fromId += chunk) {
      const toId = Math.min(shape.rows, fromId + chunk - 1);
      await seedSceneChunk(client, shape, { fromId, toId }, now);
      bar.update(toId, { rate: Math.round(toId / ((performance.now() - t0) / 1000)) });
    }
    bar.stop();
    await syncOutboxIdentity(client);
  } finally {
    client.release();
  }
  return { ms: performance.now() - t0 };
}

interface PollSample {
  atMs: number;
  ms: number;
}

/** The relay's poll, verbatim, over and over on its own connection until stopped. */
function pollLoop(pool: Pool, config: Config, everyMs: number, t0: number) {
  const samples: PollSample[] = [];
  let running = true;
  const done = (async () => {
    const client = await pool.connect();
    try {
      for (let shard = 0; running; shard = (shard + 1) % config.relay.shards) {
        const start = performance.now();
        await client.query(FETCH_PENDING_IDS_SQL, [config.relay.shards, shard, config.relay.batchSize, FROM_THE_BEGINNING]);
        samples.push({ atMs: start - t0, ms: performance.now() - start });
        await new Promise((r) => setTimeout(r, everyMs));
      }
    } finally {
      client.release();
    }
  })();
  return { samples, stop: async () => ((running = false), done) };
}

/** The relay's poll for 5 s with nothing else of ours running: the machine's own noise. */
async function pollBaseline(pool: Pool, config: Config): Promise<number[]> {
  const loop = pollLoop(pool, config, opts.pollEveryMs, performance.now());
  await new Promise((r) => setTimeout(r, 5_000));
  await loop.stop();
  return loop.samples.map((p) => p.ms);
}

async function clearBacklog(pool: Pool, config: Config, batchSize: number, pauseMs: number, pollEveryMs: number) {
  const cutoff = await databaseTimeAgo(pool, config.retention.windowMs);
  const walk = await planOutboxWalk(pool, cutoff);
  const batches: (SweepBatch & { atMs: number })[] = [];
  const t0 = performance.now();
  const poll = pollLoop(pool, config, pollEveryMs, t0);
  const total = Math.max(1, (walk.untilId ?? 0) - (walk.fromId ?? 0));
  const bar = progressBar('deleting [{bar}] {percentage}% | {deleted} rows | {rate} rows/s | poll p99 {p99} ms | ETA {eta_formatted}', 5_000);
  bar.start(total, 0, { deleted: 0, rate: 0, p99: '-' });
  const result = walk.fromId === undefined || walk.untilId === undefined
    ? { deleted: 0, batches: 0, complete: true }
    : await sweepPublishedOutbox(pool, {
        cutoff,
        fromId: walk.fromId,
        untilId: walk.untilId,
        batchSize,
        pauseMs,
        deadline: Number.MAX_SAFE_INTEGER,
        onBatch: (progress, batch) => {
          batches.push({ ...batch, atMs: performance.now() - t0 - batch.ms });
          if (batches.length % 10 === 0) {
            const recent = poll.samples.slice(-500).map((s) => s.ms).sort((a, b) => a - b);
            bar.update(progress.nextId - walk.fromId!, { deleted: progress.deleted, rate: Math.round(progress.deleted / ((performance.now() - t0) / 1000)), p99: percentile(recent, 99).toFixed(2) });
          }
        },
      });
  const ms = performance.now() - t0;
  bar.update(total, { deleted: result.deleted });
  bar.stop();
  await poll.stop();
  return { cutoff, walk, result, ms, batches, polls: poll.samples };
}

async function withTemporal(config: Config, work: (client: Client) => Promise<unknown>) {
  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    await work(new Client({ connection, namespace: config.temporal.namespace }));
  } finally {
    await connection.close();
  }
}

function doctorSummary(report: DoctorReport) {
  return {
    healthy: report.healthy,
    problems: report.checks.flatMap((c) => c.problems.map((p) => `${p.severity}: ${p.message}`)),
    facts: Object.fromEntries(report.checks.map((c) => [c.check, Object.fromEntries(c.facts.map((f) => [f.label, f.value]))])),
  };
}

async function main() {
  const base = loadStackConfig();
  const url = withDatabase(base.database.url, opts.database);
  const config = loadStackConfig({ ...process.env, DATABASE_URL: url, RETENTION_SCHEDULE_ID: SCENE_SCHEDULE_ID, RETENTION_TASK_QUEUE: SCENE_SCHEDULE_ID });
  const shape: SceneShape = { rows: opts.rows, perDay: opts.perDay, pending: opts.pending, parked: opts.parked };
  const batchSize = opts.batchSize ?? config.retention.batchSize;
  const pauseMs = opts.pauseMs ?? config.retention.batchPauseMs;
  console.log(`scene: ${shape.rows.toLocaleString()} rows (${(shape.rows / shape.perDay).toFixed(0)} days × ${shape.perDay.toLocaleString()}/day), ${shape.pending} pending, ${shape.parked} parked, in database ${opts.database}`);

  step(`1. building the never-cleaned outbox`);
  await withTemporal(config, (client) => client.schedule.getHandle(SCENE_SCHEDULE_ID).delete().catch(() => undefined));
  await recreateDatabase(base.database.url, opts.database);
  await migrate(url);
  const pool = createPool(url, { max: 4, application_name: 'scene', statement_timeout: 0 /* one chunk of millions of rows, VACUUM, CREATE INDEX */ });
  try {
    if (!opts.keepIndex) await pool.query('DROP INDEX temporal_outbox.outbox_events_pending_idx'); // as in the seed: no partial index
    const seeded = await seed(pool, shape);
    console.log(`seeded ${shape.rows.toLocaleString()} rows in ${(seeded.ms / 1000).toFixed(1)} s (${Math.round(shape.rows / (seeded.ms / 1000)).toLocaleString()} rows/s)`);
    // Eight months of autovacuum would have set hint bits and the visibility map; so do we.
    const vacuum1 = await timed('VACUUM (ANALYZE) after seeding', () => pool.query('VACUUM (ANALYZE) temporal_outbox.outbox_events'));

    step('2. doctor on the 8-month table');
    const before = await runDoctor(config);
    process.stdout.write(formatReport(before));

    step("3. the doctor's fixes: the partial index, then retention");
    const index = opts.keepIndex ? undefined : await timed('CREATE INDEX CONCURRENTLY outbox_events_pending_idx', () => pool.query(CREATE_PENDING_INDEX_SQL));
    // The control: the same poll loop for a few seconds with no retention running, so the poll
    // figures during the cleanup can be told apart from what the machine does anyway.
    // Taken 5 s before and 5 s after the cleanup, pooled: the machine's load drifts.
    const baselineBefore = await pollBaseline(pool, config);
    const loadBefore = os.loadavg();
    console.log(`batch size ${batchSize} ids, pause ${pauseMs} ms; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
    const cleanup = await clearBacklog(pool, config, batchSize, pauseMs, opts.pollEveryMs);
    const loadDuring = os.loadavg();
    const baselineAfter = await pollBaseline(pool, config);
    const baseline = [...baselineBefore, ...baselineAfter].sort((a, b) => a - b);
    const rate = cleanup.result.deleted / (cleanup.ms / 1000);
    const pollMs = cleanup.polls.map((p) => p.ms).sort((a, b) => a - b);
    const batchMs = cleanup.batches.filter((b) => b.deleted > 0).map((b) => b.ms);
    console.log(`deleted ${cleanup.result.deleted.toLocaleString()} rows in ${(cleanup.ms / 1000).toFixed(1)} s: ${Math.round(rate).toLocaleString()} rows/s, ${cleanup.batches.length} batches (median ${median(batchMs).toFixed(1)} ms)`);
    const fmt = (xs: number[]) => `p50 ${percentile(xs, 50).toFixed(2)} ms, p99 ${percentile(xs, 99).toFixed(2)} ms, max ${percentile(xs, 100).toFixed(2)} ms (${xs.length} polls)`;
    console.log(`relay poll, no cleanup running: ${fmt(baseline)}`);
    console.log(`relay poll, during the cleanup: ${fmt(pollMs)}`);
    console.log(`relay poll p99 during ÷ without cleanup: ${(percentile(pollMs, 99) / percentile(baseline, 99)).toFixed(1)}×; load average at the end of the cleanup ${loadDuring.map((l) => l.toFixed(2)).join(' ')}`);
    const vacuum2 = await timed('VACUUM (ANALYZE) after the cleanup (autovacuum would do it too)', () => pool.query('VACUUM (ANALYZE) temporal_outbox.outbox_events'));

    // Meanwhile a live relay would have published the 50 pending rows and 50 new ones arrived:
    // without this turnover the scene's pending rows would age into a false "relay stopped".
    await pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = now() WHERE published_at IS NULL AND parked_at IS NULL`);
    await pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) SELECT 'payment_confirmed', jsonb_build_object('event_id', 'fresh-' || g, 'type', 'payment_confirmed', 'account_id', g, 'amount', 100) FROM generate_series(1, $1::int) g`, [shape.pending]);

    // The last fix the doctor named: the schedule. Paused here, as no worker serves this database.
    await withTemporal(config, async (client) => {
      await ensureRetentionSchedule(client, config);
      await client.schedule.getHandle(SCENE_SCHEDULE_ID).pause('scene: no worker serves outbox_scene');
    });

    step('4. doctor after the cleanup');
    const after = await runDoctor(config);
    process.stdout.write(formatReport(after));
    const afterPoll = after.checks.find((c) => c.check === 'poll-plan')?.facts.find((f) => f.label.startsWith('execution time'))?.value;
    const beforePoll = before.checks.find((c) => c.check === 'poll-plan')?.facts.find((f) => f.label.startsWith('execution time'))?.value;

    const name = `retention-scene${shape.rows === 12_000_000 ? '' : `-${shape.rows}`}${batchSize === 10_000 ? '' : `-batch${batchSize}`}${pauseMs ? `-pause${pauseMs}` : ''}`;
    const files = await saveBenchmark({
      name,
      command: `npm run scene:seed -- ${process.argv.slice(2).join(' ')}`.trim(),
      settings: { ...shape, batchSize, pauseMs, windowMs: config.retention.windowMs, pollEveryMs: opts.pollEveryMs, relayShards: config.relay.shards, relayBatchSize: config.relay.batchSize, droppedIndexFirst: !opts.keepIndex },
      results: {
        seed: { ms: Math.round(seeded.ms), rowsPerSecond: Math.round(shape.rows / (seeded.ms / 1000)), vacuumMs: Math.round(vacuum1.ms) },
        doctorBefore: doctorSummary(before),
        pollBeforeMs: beforePoll,
        createIndexMs: index ? Math.round(index.ms) : null,
        pollWithoutCleanup: { polls: baseline.length, pollMsP50: percentile(baseline, 50), pollMsP99: percentile(baseline, 99), pollMsMax: percentile(baseline, 100) },
        pollP99DuringOverWithout: percentile(pollMs, 99) / percentile(baseline, 99),
        loadAverage: { beforeCleanup: loadBefore, endOfCleanup: loadDuring },
        cleanup: {
          deleted: cleanup.result.deleted,
          ms: Math.round(cleanup.ms),
          rowsPerSecond: Math.round(rate),
          batches: cleanup.batches.length,
          batchMsP50: median(batchMs),
          batchMsP99: percentile([...batchMs].sort((a, b) => a - b), 99),
          polls: pollMs.length,
          pollMsP50: percentile(pollMs, 50),
          pollMsP99: percentile(pollMs, 99),
          pollMsMax: percentile(pollMs, 100),
        },
        vacuumAfterMs: Math.round(vacuum2.ms),
        doctorAfter: doctorSummary(after),
        pollAfterMs: afterPoll,
      },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `Retention of the ${shape.rows.toLocaleString()}-row outbox: batch time and relay poll latency`,
        vconcat: [
          {
            width: 800,
            height: 200,
            data: { values: cleanup.batches.map((b) => ({ s: b.atMs / 1000, ms: b.ms, perThousand: b.deleted ? (b.ms / b.deleted) * 1000 : null })) },
            mark: { type: 'point', size: 8 },
            encoding: { x: { field: 's', type: 'quantitative', title: 'seconds into the cleanup' }, y: { field: 'ms', type: 'quantitative', title: `ms per batch (${batchSize} ids)` } },
          },
          {
            width: 800,
            height: 200,
            data: { values: cleanup.polls.map((p) => ({ s: p.atMs / 1000, ms: p.ms })) },
            mark: { type: 'point', size: 6, color: '#d62728' },
            encoding: { x: { field: 's', type: 'quantitative', title: 'seconds into the cleanup' }, y: { field: 'ms', type: 'quantitative', title: 'relay poll latency (ms)', scale: { type: 'log' } } },
          },
        ],
      },
    });
    console.log(`\nresults: ${files.join(', ')}`);
    if (!after.healthy) process.exitCode = 1;
  } finally {
    await pool.end();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

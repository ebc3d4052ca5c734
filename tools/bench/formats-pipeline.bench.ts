import '../local-stack/apply-stack-env';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Pool } from 'pg';
import { startWorkerEntry, stopChildWorkers, type ChildWorker } from '../local-stack/child-processes';
import { waitForPollers } from '../local-stack/wait-for-workers';
import { loadStackConfig } from '../local-stack/stack-config';
import { cachePaths } from '../local-stack/paths';
import { ensureSchemaRegistry, localSchemaRegistryUrl } from '../local-stack/schema-registry';
import { startRelays, stopRelays, type RelayControlOptions } from '../../src/outbox/relay-control';
import { pauseShards, resumeShards } from '../../src/outbox/relay-operator-control';
import { measureCpu, microsPerEvent } from './support/cpu-usage';
import { commandLine, median, saveBenchmark } from './support/report';
import { waitCredited } from './support/credit-load';
import { FORMAT_OPTIONS, type FormatOption } from './support/format-options';
import { createTestDatabase } from '../../test/kit/database';
import { workerEntry } from '../../workers/entries';
import { exampleConsumerEntry } from '../../examples/payments/worker-entries';

// What each format option costs end to end, side by side with plain JSON in one run: the real
// relay worker and the real consumer worker (processes, at their defaults) over the real stack,
// each option on a topic of its own. Per run: a backlog of payment_confirmed rows is inserted while
// the relay is paused, then the relay alone drains it to Kafka (relay events/s, its CPU µs per
// event), then a consumer worker alone applies it (credits/s from its first credits to its last,
// its CPU µs per event). Alone, so neither worker's figure carries the other's CPU on this
// machine's two cores. Options alternate (ABC CBA ABC); the figures are medians of the repeats.
//   npm run bench:formats-pipeline   (BENCH_EVENTS=20000 BENCH_REPEATS=3; BENCH_VARIANTS='plain JSON,registry Avro' to run some)

const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const WARM_EVENTS = Number(process.env.BENCH_WARM_EVENTS ?? Math.min(2_000, EVENTS));
const ACCOUNTS = 100;
const chosen = process.env.BENCH_VARIANTS?.split(',').map((s) => s.trim());
const OPTIONS = FORMAT_OPTIONS.filter((o) => !chosen || chosen.includes(o.name));

interface RunFigures {
  option: string;
  repeat: number;
  relayEventsPerSecond: number;
  consumerCreditsPerSecond: number;
  /** What the consumer's rate is timed from: its first credits, or (all seen at once) its polling Temporal. */
  consumerRateTimedFrom: 'first credits' | 'worker polling';
  relayCpuMicrosPerEvent: number;
  consumerCpuMicrosPerEvent: number;
  loadAverage: number[];
}

const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Inserts `count` credits in one statement (a backlog), tagged; returns the highest outbox id before them. */
async function insertBacklog(pool: Pool, count: number, tag: string): Promise<number> {
  const { rows } = await pool.query<{ max: string | null }>('SELECT max(id)::text AS max FROM temporal_outbox.outbox_events');
  await pool.query(
    `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
     SELECT 'payment_confirmed', jsonb_build_object('event_id', $1::text || '-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % $3::int, 'amount', 100)
       FROM generate_series(1, $2::int) g`,
    [tag, count, ACCOUNTS],
  );
  return Number(rows[0]!.max ?? 0);
}

async function waitPublished(pool: Pool, afterId: number, count: number, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ n: number; parked: number }>(
      'SELECT count(*) FILTER (WHERE published_at IS NOT NULL)::int AS n, count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked FROM temporal_outbox.outbox_events WHERE id > $1',
      [afterId],
    );
    if (rows[0]!.parked > 0) throw new Error(`the relay parked ${rows[0]!.parked} rows: see the relay worker's log`);
    if (rows[0]!.n >= count) return;
    if (Date.now() > deadline) throw new Error(`relay published ${rows[0]!.n} of ${count} in ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

/**
 * Waits until the inbox holds `total` rows and says how fast the consumer got there: the credits
 * after the first ones seen, over the time from seeing them to the last (a worker's start and its
 * joining the group come before the first credit, so they are not counted).
 */
async function waitCreditRate(pool: Pool, total: number, expectedNew: number, consumerStartedAt: number, timeoutMs = 600_000): Promise<{ perSecond: number; timedFrom: 'first credits' | 'worker polling' }> {
  const deadline = Date.now() + timeoutMs;
  let first: { at: number; count: number } | undefined;
  for (;;) {
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events');
    const n = rows[0]!.n;
    const fresh = n - (total - expectedNew);
    if (fresh > 0 && first === undefined) first = { at: Date.now(), count: fresh };
    if (n >= total) {
      const seconds = (Date.now() - first!.at) / 1000;
      if (seconds > 0 && fresh > first!.count) return { perSecond: Math.round((fresh - first!.count) / seconds), timedFrom: 'first credits' };
      // All of it seen at once (a small run, one flight): only the time since the worker polled is left, its group join included.
      return { perSecond: Math.round(fresh / ((Date.now() - consumerStartedAt) / 1000)), timedFrom: 'worker polling' };
    }
    if (Date.now() > deadline) throw new Error(`the consumer applied ${fresh} of ${expectedNew} in ${timeoutMs / 1000} s`);
    await sleep(50);
  }
}

async function main() {
  const base = loadStackConfig();
  const registryUrl = process.env.SCHEMA_REGISTRY_URL ?? localSchemaRegistryUrl(base.local.schemaRegistryPort);
  if (OPTIONS.some((o) => o.needsRegistry) && !process.env.SCHEMA_REGISTRY_URL) {
    await ensureSchemaRegistry(base, cachePaths(base.local.cacheDir), (m) => console.log(`[schema-registry] ${m}`));
  }
  const db = await createTestDatabase({ serverUrl: base.database.url, prefix: 'bench_formats_pipeline' });
  await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
  const suffix = crypto.randomBytes(3).toString('hex');
  const logDir = path.join(base.local.cacheDir, 'logs', `bench-formats-pipeline-${suffix}`);
  const connection = await Connection.connect({ address: base.temporal.address });
  const client = new Client({ connection, namespace: base.temporal.namespace });
  const startedAt = Date.now();
  const loadAtStart = loadAverage();
  const runs: RunFigures[] = [];
  let credited = 0;
  let index = 0;

  const runOption = async (option: FormatOption, repeat: number) => {
    const run = index++;
    const name = `bench-fp-${suffix}-${run}`;
    const env = {
      ...process.env,
      DATABASE_URL: db.url,
      KAFKA_TOPIC: name,
      KAFKA_DEAD_LETTER_TOPIC: `${name}.dlq`,
      CONSUMER_GROUP: name,
      RELAY_TASK_QUEUE: `${name}-relay`,
      CONSUMER_TASK_QUEUE: `${name}-credit`,
      RELAY_WORKFLOW_ID_PREFIX: `${name}-relay`,
      LOG_LEVEL: 'warn',
      ...option.env(name, registryUrl),
    };
    await option.prepare?.(name, registryUrl);
    const config = loadStackConfig(env);
    const control: RelayControlOptions = { client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: config.relay.batchSize, workflowId: config.relay.workflowId };
    const shards = Array.from({ length: config.relay.shards }, (_, i) => i);
    const workers: ChildWorker[] = [];
    const startConsumer = async (label: string) => {
      const w = startWorkerEntry(`${label}-${run}`, exampleConsumerEntry(), logDir, env);
      workers.push(w);
      await waitForPollers(client, [config.consumer.taskQueue!], 240_000);
      return w;
    };
    try {
      const relay = startWorkerEntry(`relay-${run}`, workerEntry('relay'), logDir, { ...env, ...option.relayEnv }, option.relayNodeArgs);
      workers.push(relay);
      await waitForPollers(client, [config.relay.taskQueue!], 240_000);
      await startRelays(control, config.relay.shards);

      // Warm-up, not measured: the workers' first events (JIT, the registry's schema lookup, the group's join).
      const warm = await startConsumer('consumer-warm');
      await insertBacklog(db.pool, WARM_EVENTS, `${name}-warm`);
      credited += WARM_EVENTS;
      await waitCredited(db.pool, credited, 600_000);
      await stopChildWorkers([warm], 20_000);

      // The relay alone: a backlog waits while it is paused, then it drains it.
      await pauseShards(control, shards, 'bench: backlog');
      const afterId = await insertBacklog(db.pool, EVENTS, `${name}-run`);
      const load = loadAverage();
      const relayCpu = measureCpu(() => ({ relay: [relay.process.pid!] }));
      const relayStart = Date.now();
      await resumeShards(control, shards, 'bench: drain');
      await waitPublished(db.pool, afterId, EVENTS);
      const relaySeconds = (Date.now() - relayStart) / 1000;
      const relayMicros = microsPerEvent(relayCpu.stop().cpuSeconds, EVENTS).relay ?? 0;

      // The consumer alone: a fresh worker (same group) applies what the relay put on the topic.
      const consumer = await startConsumer('consumer');
      const consumerPolling = Date.now();
      const consumerCpu = measureCpu(() => ({ consumer: [consumer.process.pid!] }));
      credited += EVENTS;
      const credits = await waitCreditRate(db.pool, credited, EVENTS, consumerPolling);
      const consumerMicros = microsPerEvent(consumerCpu.stop().cpuSeconds, EVENTS).consumer ?? 0;

      const figures: RunFigures = {
        option: option.name,
        repeat,
        relayEventsPerSecond: Math.round(EVENTS / relaySeconds),
        consumerCreditsPerSecond: credits.perSecond,
        consumerRateTimedFrom: credits.timedFrom,
        relayCpuMicrosPerEvent: relayMicros,
        consumerCpuMicrosPerEvent: consumerMicros,
        loadAverage: load,
      };
      runs.push(figures);
      console.log(
        `run ${run + 1}: ${option.name} (repeat ${repeat + 1}): relay ${figures.relayEventsPerSecond} events/s, ${relayMicros} µs CPU per event; consumer ${figures.consumerCreditsPerSecond} credits/s (from its ${figures.consumerRateTimedFrom}), ${consumerMicros} µs CPU per event; load ${load.join(' ')}`,
      );
      await stopRelays(control, config.relay.shards);
    } finally {
      await stopChildWorkers(workers, 20_000);
    }
  };

  try {
    // Interleaved: ABC, CBA, ABC … so drift over the run (load, table growth) hits every option alike.
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      for (const option of repeat % 2 === 0 ? OPTIONS : [...OPTIONS].reverse()) await runOption(option, repeat);
    }
    const { rows: balance } = await db.pool.query('SELECT sum(balance)::bigint AS total FROM accounts');
    const exact = Number(balance[0].total) === credited * 100;
    const summary = OPTIONS.map((o) => {
      const rs = runs.filter((r) => r.option === o.name);
      const med = (pick: (r: RunFigures) => number) => Math.round(median(rs.map(pick)));
      return {
        option: o.name,
        relayEventsPerSecond: med((r) => r.relayEventsPerSecond),
        relayCpuMicrosPerEvent: med((r) => r.relayCpuMicrosPerEvent),
        consumerCreditsPerSecond: med((r) => r.consumerCreditsPerSecond),
        consumerCpuMicrosPerEvent: med((r) => r.consumerCpuMicrosPerEvent),
        runs: rs,
      };
    });
    const loadAtEnd = loadAverage();
    const minutes = +((Date.now() - startedAt) / 60_000).toFixed(1);
    console.log(`\nformats end to end, ${EVENTS} events per run, ${REPEATS} runs per option, medians (balances exact: ${exact}; load ${loadAtStart.join(' ')} → ${loadAtEnd.join(' ')}; ${minutes} min):`);
    console.log(`  ${'option'.padEnd(24)} ${'relay events/s'.padStart(15)} ${'relay µs/event'.padStart(15)} ${'consumer credits/s'.padStart(19)} ${'consumer µs/event'.padStart(18)}`);
    for (const s of summary) {
      console.log(`  ${s.option.padEnd(24)} ${String(s.relayEventsPerSecond).padStart(15)} ${String(s.relayCpuMicrosPerEvent).padStart(15)} ${String(s.consumerCreditsPerSecond).padStart(19)} ${String(s.consumerCpuMicrosPerEvent).padStart(18)}`);
    }
    const written = await saveBenchmark({
      name: process.env.BENCH_NAME ?? 'formats-pipeline',
      command: commandLine('bench:formats-pipeline'),
      settings: {
        eventsPerRun: EVENTS,
        warmEventsPerRun: WARM_EVENTS,
        repeats: REPEATS,
        order: 'interleaved: options in order, then reversed, then in order',
        accounts: ACCOUNTS,
        relayShards: base.relay.shards,
        relayBatchSize: base.relay.batchSize,
        partitions: base.kafka.partitions,
        method:
          'per run: own topic, relay worker and consumer worker processes at their defaults; warm-up of warmEventsPerRun events through both; backlog inserted with the relay paused; relay alone drains it (events/s = backlog / wall time from resume to the last row published; CPU of the relay process over that time); then a fresh consumer worker alone applies it (credits/s = credits after the first ones seen over the time from seeing them to the last, polled every 50 ms; CPU of the consumer process from its polling Temporal to the last credit)',
        loadAtStart,
        loadAtEnd,
        minutes,
      },
      results: { balancesExact: exact, options: summary },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `CPU µs per event by worker and format, ${REPEATS} runs each (${EVENTS} events per run)`,
        data: { values: runs.flatMap((r) => [{ option: r.option, worker: 'relay', micros: r.relayCpuMicrosPerEvent }, { option: r.option, worker: 'consumer', micros: r.consumerCpuMicrosPerEvent }]) },
        mark: { type: 'point', filled: true, size: 80 },
        encoding: {
          y: { field: 'option', type: 'nominal', title: null, sort: OPTIONS.map((o) => o.name) },
          x: { field: 'micros', type: 'quantitative', title: 'worker CPU µs per event' },
          color: { field: 'worker', type: 'nominal' },
        },
        width: 700,
        height: 260,
      },
    });
    console.log(`\nwritten: ${written.join(', ')}`);
  } finally {
    await connection.close();
    await db.drop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startChildWorker, stopChildWorkers } from '../app/child-processes';
import { waitForPollers } from '../app/wait-for-workers';
import { loadConfig } from '../config/env';
import { createKafka } from '../kafka/client';
import { ensureTopics } from '../kafka/topics';
import { startRelays } from '../outbox/relay-control';
import { percentile, saveBenchmark } from './support/report';
import { createTestDatabase } from '../testkit/database';
import { WORKER_NODE_ARGS } from '../workers/node-args';

// The whole pipeline's latency, end to end: outbox commit → relay → Kafka → consumer → balance
// credited, at 1,000 events/s offered, with a relay worker and a consumer worker as real
// processes (the BRIEF's target: p99 ≤ 300 ms). Both timestamps come from PostgreSQL's clock:
// outbox_events.created_at (the producing transaction) and inbox_processed_events.processed_at
// (the crediting transaction), so no clocks are compared across processes.
//   npm run bench:pipeline            (RATE=1000 SECONDS=30 by default)

const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 30);
const ACCOUNTS = 100;

async function main() {
  const base = loadConfig();
  const db = await createTestDatabase({ serverUrl: base.database.url, prefix: 'bench_pipeline' });
  const suffix = crypto.randomBytes(3).toString('hex');
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    KAFKA_TOPIC: `bench-pipeline-${suffix}`,
    KAFKA_DEAD_LETTER_TOPIC: `bench-pipeline-${suffix}.dlq`,
    CONSUMER_GROUP: `bench-pipeline-${suffix}`,
    RELAY_TASK_QUEUE: `bench-pipeline-relay-${suffix}`,
    CONSUMER_TASK_QUEUE: `bench-pipeline-credit-${suffix}`,
    LOG_LEVEL: 'warn',
  };
  const config = loadConfig(env);
  await ensureTopics(createKafka(config, 'bench-pipeline'), config);
  await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
  const logDir = path.join(config.local.cacheDir, 'logs', 'bench-pipeline');
  const workers = [
    startChildWorker('relay-worker', 'workers/relay.worker.ts', logDir, env, [...WORKER_NODE_ARGS.relay]),
    startChildWorker('consumer-worker', 'workers/consumer.worker.ts', logDir, env, [...WORKER_NODE_ARGS.consumer]),
  ];
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const relayIds = [0, 1].map((i) => `bench-pipeline-relay-${suffix}-${i}`);
  // Which Temporal ran it (dev server on SQLite, or TEMPORAL_SERVER=postgres), recorded and in the file name, so both are kept side by side.
  const cluster = await connection.workflowService.getClusterInfo({});
  const temporal = { serverVersion: cluster.serverVersion, persistenceStore: cluster.persistenceStore, visibilityStore: cluster.visibilityStore, historyShards: cluster.historyShardCount };
  const benchName = temporal.persistenceStore === 'sqlite' ? 'pipeline' : `pipeline-temporal-${temporal.persistenceStore}`;
  try {
    await waitForPollers(client, [config.relay.taskQueue!, config.consumer.taskQueue!], 180_000);
    await startRelays({ client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: 2000, workflowId: (i) => relayIds[i]! }, 2);

    // Warm-up, then the measured run: 10 events per transaction every 10 ms at 1,000/s.
    const produce = async (seconds: number, tag: string) => {
      const perTx = 10;
      const tickMs = (perTx * 1000) / RATE;
      const start = Date.now();
      const inflight: Promise<unknown>[] = [];
      for (let tick = 0; tick * tickMs < seconds * 1000; tick++) {
        const due = start + tick * tickMs;
        if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
        const events = Array.from({ length: perTx }, (_, k) => ({ event_id: `${tag}-${tick}-${k}`, type: 'payment_confirmed', account_id: 1 + ((tick * perTx + k) % ACCOUNTS), amount: 100 }));
        inflight.push(db.pool.query(`INSERT INTO outbox_events (event_type, payload) SELECT 'payment_confirmed', e FROM unnest($1::jsonb[]) AS e`, [events.map((e) => JSON.stringify(e))]));
      }
      await Promise.all(inflight);
    };
    const drained = async (expected: number) => {
      const deadline = Date.now() + 120_000;
      while (Date.now() < deadline) {
        const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM inbox_processed_events');
        if (rows[0].n >= expected) return;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error('pipeline did not drain in 120 s');
    };
    await produce(3, 'warm');
    await drained(3 * RATE);
    const loadAtStart = os.loadavg().map((l) => +l.toFixed(2));
    await produce(SECONDS, 'run');
    await drained((3 + SECONDS) * RATE);

    const { rows } = await db.pool.query<{ ms: number }>(
      `SELECT extract(epoch FROM i.processed_at - o.created_at) * 1000 AS ms
         FROM outbox_events o JOIN inbox_processed_events i ON i.event_id = o.payload->>'event_id'
        WHERE o.payload->>'event_id' LIKE 'run-%'`,
    );
    const sorted = rows.map((r) => Number(r.ms)).sort((a, b) => a - b);
    const summary = {
      events: sorted.length,
      p50Ms: Math.round(percentile(sorted, 50)),
      p90Ms: Math.round(percentile(sorted, 90)),
      p99Ms: Math.round(percentile(sorted, 99)),
      maxMs: Math.round(sorted.at(-1)!),
    };
    const { rows: balance } = await db.pool.query('SELECT sum(balance)::bigint AS total FROM accounts');
    const exact = Number(balance[0].total) === (3 + SECONDS) * RATE * 100;
    const loadAtEnd = os.loadavg().map((l) => +l.toFixed(2));
    console.log(`pipeline on Temporal ${temporal.serverVersion} (${temporal.persistenceStore}, ${temporal.historyShards} history shards) at ${RATE}/s for ${SECONDS} s: commit → credited p50 ${summary.p50Ms} ms, p90 ${summary.p90Ms} ms, p99 ${summary.p99Ms} ms, max ${summary.maxMs} ms (${summary.events} events; balances exact: ${exact}; load ${loadAtStart.join(' ')} → ${loadAtEnd.join(' ')})`);
    const buckets = new Map<number, number>();
    for (const ms of sorted) buckets.set(Math.floor(ms / 10) * 10, (buckets.get(Math.floor(ms / 10) * 10) ?? 0) + 1);
    const written = await saveBenchmark({
      name: benchName,
      command: 'npm run bench:pipeline',
      settings: { temporal, rate: RATE, seconds: SECONDS, accounts: ACCOUNTS, relayShards: 2, relayBatchSize: 2000, eventsPerTransaction: 10, loadAtStart, loadAtEnd, clocks: 'both timestamps from PostgreSQL now(): outbox created_at and inbox processed_at (start of the crediting transaction)' },
      results: { ...summary, balancesExact: exact },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `outbox commit → balance credited at ${RATE}/s (p50 ${summary.p50Ms} ms, p99 ${summary.p99Ms} ms)`,
        data: { values: [...buckets].map(([ms, n]) => ({ ms, n })) },
        mark: 'bar',
        encoding: { x: { field: 'ms', type: 'quantitative', bin: { binned: true, step: 10 }, title: 'latency (ms, 10 ms buckets)' }, y: { field: 'n', type: 'quantitative', title: 'events' } },
        width: 700,
        height: 300,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    for (const id of relayIds) await client.workflow.getHandle(id).terminate('benchmark over').catch(() => undefined);
    await connection.close();
    await stopChildWorkers(workers, 5000);
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

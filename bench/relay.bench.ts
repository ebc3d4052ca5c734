import { Client, Connection } from '@temporalio/client';
import { Kafka, logLevel } from 'kafkajs';
import { loadConfig } from '../config/env';
import { createTestDatabase, type TestDatabase } from '../test/support/database';
import { uniqueName } from '../test/support/ids';
import { RelayProcess } from '../test/support/relay-harness';
import { percentile, saveBenchmark } from './support/report';

// Relay benchmark: outbox commit → Kafka ack (acks=all) → marked published.
//   1. throughput: drain a committed backlog, across batch sizes and shard counts, 1 vs 2 workers
//   2. latency: 1,000 events/s offered, commit (client-side, after COMMIT) → append on the
//      broker (topic with message.timestamp.type=LogAppendTime: the broker stamps each message)
//   3. idle cost: database transactions and history events per idle minute
// Everything runs on this machine next to PostgreSQL, Kafka and the Temporal dev server.
// Run: npm run bench:relay   (about 4 minutes; BENCH_QUICK=1 for a smoke run)

const quick = process.env.BENCH_QUICK === '1';
const config = loadConfig();
const kafka = new Kafka({ clientId: uniqueName('relay-bench'), brokers: config.kafka.brokers, logLevel: logLevel.NOTHING });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ThroughputResult {
  batchSize: number;
  shards: number;
  workers: number;
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

async function createTopic(logAppendTime = false): Promise<string> {
  const topic = uniqueName('bench-relay');
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: 6, replicationFactor: 1, configEntries: logAppendTime ? [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] : [] }],
  });
  await admin.disconnect();
  return topic;
}

async function deleteTopics(topics: string[]) {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
}

async function insertBacklog(db: TestDatabase, n: number) {
  for (let from = 1; from <= n; from += 10_000) {
    await db.pool.query(
      `INSERT INTO outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', md5(random()::text || g), 'type', 'payment_confirmed', 'account_id', g % 1000, 'amount', 100)
         FROM generate_series($1::int, $2::int) g`,
      [from, Math.min(n, from + 9_999)],
    );
  }
}

class Relays {
  readonly workflowIds: string[] = [];
  constructor(private readonly client: Client, readonly taskQueue: string) {}
  async start(shards: number, batchSize: number) {
    for (let i = 0; i < shards; i++) {
      const workflowId = uniqueName(`bench-relay-shard-${i}`);
      this.workflowIds.push(workflowId);
      await this.client.workflow.start('relayShardWorkflow', { taskQueue: this.taskQueue, workflowId, args: [{ shardIndex: i, shardCount: shards, batchSize }] });
    }
  }
  async terminate() {
    for (const id of this.workflowIds.splice(0)) await this.client.workflow.getHandle(id).terminate('benchmark run over').catch(() => undefined);
  }
}

/** Activity timings of one shard's history: where a batch's time goes. */
async function profileHistory(client: Client, workflowId: string) {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, { type: string; at: number }>();
  const started = new Map<string, number>();
  const sums: Record<string, { n: number; queueMs: number; runMs: number }> = {};
  const ms = (t: unknown) => {
    const ts = t as { seconds?: { toNumber(): number } | number; nanos?: number };
    const s = typeof ts.seconds === 'number' ? ts.seconds : (ts.seconds?.toNumber() ?? 0);
    return s * 1000 + (ts.nanos ?? 0) / 1e6;
  };
  let first = 0;
  let last = 0;
  for (const e of history.events ?? []) {
    const at = ms(e.eventTime);
    first ||= at;
    last = at;
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at });
    if (e.activityTaskStartedEventAttributes) started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), at);
    if (e.activityTaskCompletedEventAttributes) {
      const sid = String(e.activityTaskCompletedEventAttributes.scheduledEventId);
      const s = scheduled.get(sid)!;
      const st = started.get(sid) ?? at;
      const acc = (sums[s.type] ??= { n: 0, queueMs: 0, runMs: 0 });
      acc.n += 1;
      acc.queueMs += st - s.at;
      acc.runMs += at - st;
    }
  }
  return {
    historyEvents: history.events?.length ?? 0,
    spanMs: Math.round(last - first),
    activities: Object.fromEntries(
      Object.entries(sums).map(([type, s]) => [type, { count: s.n, avgQueueMs: +(s.queueMs / s.n).toFixed(1), avgRunMs: +(s.runMs / s.n).toFixed(1) }]),
    ),
  };
}

async function waitDrained(db: TestDatabase, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Number((await db.pool.query(`SELECT count(*) AS n FROM outbox_events WHERE published_at IS NULL`)).rows[0].n) > 0) {
    if (Date.now() > deadline) throw new Error('relay did not drain its warm-up rows');
    await sleep(50);
  }
}

async function throughputRun(db: TestDatabase, client: Client, opts: { batchSize: number; shards: number; workers: number; events: number }) {
  const topic = await createTopic();
  const taskQueue = uniqueName('bench-relay-tq');
  const workers = Array.from({ length: opts.workers }, () => new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue }));
  const relays = new Relays(client, taskQueue);
  try {
    await db.pool.query(`TRUNCATE outbox_events; DELETE FROM outbox_relay_layout`);
    // Warm-up: workers have bundled their workflow code and the shards are running and idle
    // before the clock starts, so the figure is the relay's, not its start-up's.
    for (const w of workers) await w.waitUntilRunning();
    await relays.start(opts.shards, opts.batchSize);
    await insertBacklog(db, 100);
    await waitDrained(db, 60_000);
    await sleep(500);
    const t0 = Date.now();
    // Committed in chunks of 10,000 while the relays already drain (they wake on NOTIFY).
    await insertBacklog(db, opts.events);
    for (;;) {
      const { rows } = await db.pool.query(`SELECT count(*) AS n FROM outbox_events WHERE published_at IS NULL`);
      if (Number(rows[0].n) === 0) break;
      if (Date.now() - t0 > 180_000) throw new Error('backlog not drained in 180 s');
      await sleep(50);
    }
    const seconds = (Date.now() - t0) / 1000;
    const profile = await profileHistory(client, relays.workflowIds[0]!);
    const result: ThroughputResult = { ...opts, seconds: +seconds.toFixed(2), eventsPerSecond: Math.round(opts.events / seconds) };
    console.log(`throughput batch=${opts.batchSize} shards=${opts.shards} workers=${opts.workers}: ${result.eventsPerSecond} events/s (${opts.events} in ${result.seconds} s)`);
    return { ...result, profileShard0: profile };
  } finally {
    await relays.terminate();
    for (const w of workers) await w.kill9();
    await deleteTopics([topic]);
  }
}

async function latencyRun(db: TestDatabase, client: Client, opts: { rate: number; seconds: number; shards: number; batchSize: number }) {
  const topic = await createTopic(true);
  const taskQueue = uniqueName('bench-relay-tq');
  const worker = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue });
  const relays = new Relays(client, taskQueue);
  const committedAt = new Map<string, number>();
  const latencies: number[] = [];
  const consumer = kafka.consumer({ groupId: uniqueName('bench-relay-latency'), sessionTimeout: 10_000, maxWaitTimeInMs: 100 });
  try {
    await db.pool.query(`TRUNCATE outbox_events; DELETE FROM outbox_relay_layout`);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const id = message.headers?.['event-id']?.toString();
        const c = id ? committedAt.get(id) : undefined;
        if (c !== undefined) latencies.push(Number(message.timestamp) - c);
      },
    });
    await worker.waitUntilRunning();
    await relays.start(opts.shards, opts.batchSize);
    await sleep(2000);
    // 10 events per transaction every 10 ms = 1,000 events/s, each commit timed by the client.
    const perTx = 10;
    const tickMs = (perTx * 1000) / opts.rate;
    const total = opts.rate * opts.seconds;
    const inflight: Promise<void>[] = [];
    const start = Date.now();
    for (let sent = 0, tick = 0; sent < total; sent += perTx, tick++) {
      const due = start + tick * tickMs;
      if (due > Date.now()) await sleep(due - Date.now());
      const ids = Array.from({ length: perTx }, () => uniqueName('lat'));
      inflight.push(
        db.pool
          .query(
            `INSERT INTO outbox_events (event_type, payload)
             SELECT 'payment_confirmed', jsonb_build_object('event_id', e, 'type', 'payment_confirmed', 'account_id', (random() * 1000)::int, 'amount', 1) FROM unnest($1::text[]) e`,
            [ids],
          )
          .then(() => {
            const now = Date.now();
            for (const id of ids) committedAt.set(id, now);
          }),
      );
    }
    await Promise.all(inflight);
    const offeredSeconds = (Date.now() - start) / 1000;
    for (let waited = 0; latencies.length < total && waited < 30_000; waited += 200) await sleep(200);
    const sorted = [...latencies].sort((a, b) => a - b);
    const result = {
      offeredPerSecond: Math.round(total / offeredSeconds),
      events: total,
      received: latencies.length,
      p50Ms: percentile(sorted, 50),
      p90Ms: percentile(sorted, 90),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.at(-1),
      shards: opts.shards,
      batchSize: opts.batchSize,
    };
    console.log(`latency at ${result.offeredPerSecond}/s offered: p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms (${result.received}/${total})`);
    return { result: { ...result, profileShard0: await profileHistory(client, relays.workflowIds[0]!) }, histogram: bucket(sorted) };
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await relays.terminate();
    await worker.kill9();
    await deleteTopics([topic]);
  }
}

function bucket(sorted: number[]) {
  const width = 5;
  const counts = new Map<number, number>();
  for (const v of sorted) counts.set(Math.floor(v / width) * width, (counts.get(Math.floor(v / width) * width) ?? 0) + 1);
  return [...counts.entries()].map(([ms, count]) => ({ ms, count }));
}

async function idleRun(db: TestDatabase, client: Client, opts: { shards: number; seconds: number }) {
  const topic = await createTopic();
  const taskQueue = uniqueName('bench-relay-tq');
  const worker = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue });
  const relays = new Relays(client, taskQueue);
  try {
    await db.pool.query(`TRUNCATE outbox_events; DELETE FROM outbox_relay_layout`);
    await worker.waitUntilRunning();
    await relays.start(opts.shards, 2000);
    await sleep(5000);
    const xacts = async () => {
      await db.pool.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
      const { rows } = await db.pool.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`);
      return Number(rows[0].n);
    };
    const historyLengths = async () =>
      Promise.all(relays.workflowIds.map(async (id) => Number((await client.workflow.getHandle(id).describe()).historyLength)));
    const x0 = await xacts();
    const h0 = await historyLengths();
    await sleep(opts.seconds * 1000);
    const x1 = await xacts();
    const h1 = await historyLengths();
    const perMinute = 60 / opts.seconds;
    // Our own two measurement transactions are subtracted.
    const result = {
      shards: opts.shards,
      seconds: opts.seconds,
      databaseTransactionsPerIdleMinute: Math.round((x1 - x0 - 2) * perMinute),
      historyEventsPerIdleMinutePerShard: h1.map((h, i) => Math.round((h - h0[i]!) * perMinute)),
    };
    console.log(`idle: ${result.databaseTransactionsPerIdleMinute} database transactions/min for ${opts.shards} shards; history events/min per shard: ${result.historyEventsPerIdleMinutePerShard.join(', ')}`);
    return result;
  } finally {
    await relays.terminate();
    await worker.kill9();
    await deleteTopics([topic]);
  }
}

async function main() {
  const db = await createTestDatabase();
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  try {
    const events = quick ? 10_000 : 30_000;
    const grid = quick ? [{ batchSize: 2000, shards: 2 }] : [500, 2000, 5000].flatMap((batchSize) => [1, 2, 4].map((shards) => ({ batchSize, shards })));
    const throughput = [];
    for (const g of grid) throughput.push(await throughputRun(db, client, { ...g, workers: 1, events }));
    const best = [...throughput].sort((a, b) => b.eventsPerSecond - a.eventsPerSecond)[0]!;
    const scaling = [];
    for (const workers of [1, 2]) scaling.push(await throughputRun(db, client, { batchSize: best.batchSize, shards: Math.max(2, best.shards), workers, events }));
    const latency = await latencyRun(db, client, { rate: 1000, seconds: quick ? 5 : 20, shards: 2, batchSize: 2000 });
    const idle = await idleRun(db, client, { shards: 2, seconds: quick ? 20 : 60 });

    const written = await saveBenchmark({
      name: 'relay',
      command: 'npm run bench:relay',
      settings: { events, partitions: 6, acks: 'all', note: 'PostgreSQL, Kafka, the Temporal dev server (SQLite) and the relay worker share this machine; other test runs may add noise' },
      results: { throughput, scaling, latency: latency.result, idle },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: 'Outbox relay: commit → Kafka ack → marked (events/s, 1 worker)',
        data: { values: throughput.map((t) => ({ batchSize: String(t.batchSize), shards: `${t.shards} shard${t.shards > 1 ? 's' : ''}`, eventsPerSecond: t.eventsPerSecond })) },
        mark: 'bar',
        encoding: {
          x: { field: 'batchSize', type: 'nominal', title: 'batch size' },
          xOffset: { field: 'shards' },
          y: { field: 'eventsPerSecond', type: 'quantitative', title: 'events/s' },
          color: { field: 'shards', type: 'nominal' },
        },
        width: 500,
        height: 300,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
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

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';

// One run of bench:work-counts (tools/bench/work-counts.bench.ts) against one checkout of the
// project: the tree in the working directory, with its own test kit, worker entry points and
// local stack. Loaded by path from that tree, so the same workload drives a build from before the
// layout moved (testkit/, bench/) and after (test/kit/, tools/bench/). Prints one JSON line.
//
//   argv: <relay-session | relay-local | relay-trickle | consumer> <events>
//   relay-session and relay-local commit the events in 10,000-row transactions (a backlog drained
//   at full speed: per-batch costs spread over full batches); relay-trickle commits them 10 per
//   transaction every 10 ms (1,000 events/s, sessions: short batches, so per-batch and per-wake
//   costs show).
//   env:  WORK_COUNTS_DIR (where the preloaded counter writes), the tree's stack variables

type AnyModule = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const root = process.cwd();
const moved = fs.existsSync(path.join(root, 'test', 'kit', 'database.ts'));
const load = (before: string, after: string): AnyModule => require(path.join(root, moved ? after : before)) as AnyModule; // eslint-disable-line @typescript-eslint/no-require-imports
const table = (name: string) => (moved ? `temporal_outbox.${name}` : name);

interface Counts {
  seq: number;
  pgQueries: number;
  pgByText: Record<string, number>;
  kafkaRequests: number;
  kafkaByApi: Record<string, number>;
  cpuMicros: number;
}

/** The preloaded counter's figures for `pid`, written on request (SIGUSR2); bounded wait. */
async function countsOf(pid: number): Promise<Counts> {
  const file = path.join(process.env.WORK_COUNTS_DIR!, `${pid}.json`);
  const read = (): Counts | undefined => (fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Counts) : undefined);
  const before = read()?.seq ?? 0;
  process.kill(pid, 'SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 20) {
    const now = read();
    if (now && now.seq > before) return now;
    await sleep(20);
  }
  throw new Error(`no counts from process ${pid} within 10 s`);
}

function delta(a: Counts, b: Counts) {
  const diff = (x: Record<string, number>, y: Record<string, number>) =>
    Object.fromEntries(Object.entries(y).flatMap(([k, v]) => (v - (x[k] ?? 0) > 0 ? [[k, v - (x[k] ?? 0)]] : [])));
  return { pgQueries: b.pgQueries - a.pgQueries, pgByText: diff(a.pgByText, b.pgByText), kafkaRequests: b.kafkaRequests - a.kafkaRequests, kafkaByApi: diff(a.kafkaByApi, b.kafkaByApi), cpuMicros: b.cpuMicros - a.cpuMicros };
}

const xactCommit = async (pool: AnyModule) => Number((await pool.query('SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()')).rows[0].n);

/** Every run of each workflow (continue-as-new included): workflow tasks, activity tasks, markers (local activities, and each patch once per run), all events. */
async function temporalCounts(client: Client, query: string) {
  const totals = { runs: 0, workflowTasks: 0, activityTasks: 0, localActivities: 0, historyEvents: 0 };
  for await (const run of client.workflow.list({ query })) {
    const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    totals.runs += 1;
    for (const e of history.events ?? []) {
      totals.historyEvents += 1;
      if (e.workflowTaskCompletedEventAttributes) totals.workflowTasks += 1;
      if (e.activityTaskScheduledEventAttributes) totals.activityTasks += 1;
      if (e.markerRecordedEventAttributes) totals.localActivities += 1;
    }
  }
  return totals;
}

function stackConfig(): AnyModule {
  if (!moved) return load('config/env', '').loadConfig();
  load('', 'tools/local-stack/apply-stack-env');
  return load('', 'tools/local-stack/stack-config').loadStackConfig();
}

/** Commits `events` rows 10 per transaction every 10 ms, as the relay benchmark's latency run offers them. */
async function trickle(db: AnyModule, events: number) {
  const start = Date.now();
  const inflight: Promise<unknown>[] = [];
  for (let sent = 0, tick = 0; sent < events; sent += 10, tick++) {
    const due = start + tick * 10;
    if (due > Date.now()) await sleep(due - Date.now());
    inflight.push(
      db.pool.query(
        `INSERT INTO ${table('outbox_events')} (event_type, payload)
         SELECT 'payment_confirmed', jsonb_build_object('event_id', md5(random()::text || g), 'type', 'payment_confirmed', 'account_id', (random() * 1000)::int, 'amount', 1) FROM generate_series(1, 10) g`,
      ),
    );
  }
  await Promise.all(inflight);
}

async function relayRun(mode: 'session' | 'local', events: number, offer: 'backlog' | 'trickle') {
  const config = stackConfig();
  const { createTestDatabase } = load('testkit/database', 'test/kit/database');
  const { createTestTopic } = load('testkit/kafka', 'test/kit/kafka');
  const { RelayWorkerProcess } = load('testkit/relay-worker-process', 'test/kit/relay-worker-process');
  const { Relays, relayDefaults } = load('bench/support/relay-shards', 'tools/bench/support/relay-shards');
  const { insertBacklog, waitDrained } = load('bench/support/outbox-backlog', 'tools/bench/support/outbox-backlog');
  const db = await createTestDatabase({ serverUrl: config.database.url, prefix: 'bench_counts' });
  const { topic, remove } = await createTestTopic(6, { prefix: 'bench-counts' });
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const taskQueue = `bench-counts-${process.pid}-${Date.now()}`;
  const worker = new RelayWorkerProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue });
  const relays = new Relays(client, taskQueue);
  const { shards, batchSize } = relayDefaults(config);
  try {
    await worker.waitUntilRunning();
    await relays.start({ shards, batchSize, mode });
    // The shards have drained a first few rows and are idle before counting starts.
    await insertBacklog(db, 100);
    await waitDrained(db, 60_000, 'warm-up');
    await sleep(500);
    const pid = worker.child.pid as number;
    const start = await countsOf(pid);
    const self = await countsOf(process.pid);
    const xact = await xactCommit(db.pool);
    const t0 = Date.now();
    if (offer === 'trickle') await trickle(db, events);
    else await insertBacklog(db, events);
    await waitDrained(db, 600_000, 'backlog');
    const seconds = (Date.now() - t0) / 1000;
    const end = await countsOf(pid);
    // Backends report their counts when idle, at most once a second.
    await sleep(1200);
    const selfEnd = await countsOf(process.pid);
    const transactions = (await xactCommit(db.pool)) - xact - (selfEnd.pgQueries - self.pgQueries) - 1;
    await relays.waitIdle();
    const ids = [...relays.workflowIds];
    const temporal = await temporalCounts(client, ids.map((id: string) => `WorkflowId = '${id}'`).join(' OR '));
    return { scenario: offer === 'trickle' ? 'relay-trickle' : `relay-${mode}`, events, shards, batchSize, seconds, worker: delta(start, end), pgTransactions: transactions, temporal };
  } finally {
    await relays.stop().catch(() => undefined);
    await worker.stop();
    await connection.close();
    await remove().catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

async function consumerRun(events: number) {
  const config = stackConfig();
  const { createTestDatabase } = load('testkit/database', 'test/kit/database');
  const { createTestTopic, testKafka } = load('testkit/kafka', 'test/kit/kafka');
  const { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, wireMessage } = load('testkit/consumer-harness', 'test/kit/consumer-harness');
  const partitions = 6;
  const db = await createTestDatabase({ serverUrl: config.database.url, prefix: 'bench_counts' });
  const { topic, remove } = await createTestTopic(partitions, { prefix: 'bench-counts' });
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const taskQueue = `bench-counts-${process.pid}-${Date.now()}`;
  const group = `bench-counts-${process.pid}-${Date.now()}`;
  const kafka = testKafka();
  const worker = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic, group, taskQueue, partitions, extra: { LOG_LEVEL: 'info' } }));
  try {
    // The example's handler credits accounts that exist.
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, 1000)');
    await waitUntilRunning(worker);
    // The group has settled on an empty topic before counting starts.
    await sleep(3000);
    const pid = worker.proc.pid as number;
    const start = await countsOf(pid);
    const xact = await xactCommit(db.pool);
    const producer = kafka.producer();
    await producer.connect();
    const t0 = Date.now();
    for (let i = 0; i < events; i += 5000) {
      const messages = [];
      for (let j = i; j < Math.min(events, i + 5000); j++) messages.push(wireMessage({ event_id: `wc-${j}`, account_id: 1 + (j % 1000), amount: 1 + (j % 1000) }, j + 1));
      await producer.send({ topic, messages });
    }
    await producer.disconnect();
    const deadline = Date.now() + 600_000;
    while (!(await groupCaughtUp(kafka, group, topic))) {
      if (Date.now() > deadline) throw new Error('consumer not caught up in 600 s');
      await sleep(250);
    }
    const seconds = (Date.now() - t0) / 1000;
    const end = await countsOf(pid);
    const credited = Number((await db.pool.query(`SELECT count(*)::int AS n FROM ${table('inbox_processed_events')} WHERE event_id LIKE 'wc-%'`)).rows[0].n);
    await sleep(1200);
    const transactions = (await xactCommit(db.pool)) - xact - 2;
    const temporal = await temporalCounts(client, `TaskQueue = '${taskQueue}'`);
    if (credited !== events) throw new Error(`consumer applied ${credited} of ${events} events`);
    return { scenario: 'consumer', events, credited, seconds, worker: delta(start, end), pgTransactions: transactions, temporal };
  } finally {
    await worker.stop();
    await connection.close();
    await remove().catch(() => undefined);
    await db.drop().catch(() => undefined);
  }
}

async function main() {
  const [scenario, eventsArg] = process.argv.slice(2);
  const events = Number(eventsArg ?? 50_000);
  const result = scenario === 'consumer' ? await consumerRun(events) : await relayRun(scenario === 'relay-local' ? 'local' : 'session', events, scenario === 'relay-trickle' ? 'trickle' : 'backlog');
  console.log(`WORK_COUNTS ${JSON.stringify({ ...result, tree: root, loadAverage1m: +os.loadavg()[0]!.toFixed(2) })}`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

import '../local-stack/apply-stack-env';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { Kafka, logLevel } from 'kafkajs';
import { loadStackConfig } from '../local-stack/stack-config';
import { RELAY_SHARD_WORKFLOW, RELAY_WORKFLOW_TASK_TIMEOUT, type RelayShardWorkflow } from '../../workflows/relay/contract';
import { createTestTopic, deleteTopics } from '../../test/kit/kafka';
import { measureCpu } from './support/cpu-usage';
import { insertBacklog, waitDrained } from './support/outbox-backlog';
import { RelayWorkerProcess } from '../../test/kit/relay-worker-process';
import { shardStatuses as statuses, waitSpread } from './support/shard-spread';
import { median, saveBenchmark } from './support/report';
import { uniqueName } from '../../test/kit/ids';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';

// Relay scale-out at the default settings (relay sessions, RELAY_SHARDS = 8, batch 2,000): one set
// of shards, started once, while relay worker processes are added 1 → 2 → 3 and then stopped
// (SIGTERM) 3 → 2 → 1, all with the same environment: no configuration changes between runs. At
// each step it waits until the shards' own status says they run on exactly the live workers,
// records how long that took and how the shards sit, then drains a backlog and times it.
// Finally the idle cost: database transactions and history events per idle minute.
// Run: npm run bench:relay-scale   (about 6 minutes; BENCH_QUICK=1 for a smoke run)

const quick = process.env.BENCH_QUICK === '1';
const EVENTS = Number(process.env.BENCH_EVENTS ?? (quick ? 20_000 : 100_000));
const SHARDS = Number(process.env.BENCH_SHARDS ?? loadStackConfig().relay.shards);
const BATCH = loadStackConfig().relay.batchSize;
const IDLE_SECONDS = quick ? 20 : 60;
const config = loadStackConfig();
const kafka = new Kafka({ clientId: `relay-scale-bench-${process.pid}`, brokers: config.kafka.brokers, logLevel: logLevel.NOTHING });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

async function throughputRun(db: TestDatabase, live: RelayWorkerProcess[]) {
  await waitDrained(db, 120_000, 'before run');
  await sleep(500);
  const cpu = measureCpu(() => live.map((p) => p.child.pid!));
  const t0 = Date.now();
  await insertBacklog(db, EVENTS);
  await waitDrained(db, 300_000, 'backlog');
  const seconds = (Date.now() - t0) / 1000;
  const cpuUsage = cpu.stop();
  return { workers: live.length, events: EVENTS, seconds: +seconds.toFixed(2), eventsPerSecond: Math.round(EVENTS / seconds), cpu: cpuUsage, loadAverage1m: loadAverage()[0] };
}

async function idleRun(db: TestDatabase, client: Client, ids: string[], workers: number) {
  const deadline = Date.now() + 60_000;
  while ((await statuses(client, ids)).some((s) => s.state !== 'idle') && Date.now() < deadline) await sleep(500);
  await sleep(5_000);
  const xacts = async () => {
    await db.pool.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
    const { rows } = await db.pool.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`);
    return Number(rows[0].n);
  };
  const historyLengths = async () => Promise.all(ids.map(async (id) => Number((await client.workflow.getHandle(id).describe()).historyLength)));
  const x0 = await xacts();
  const h0 = await historyLengths();
  await sleep(IDLE_SECONDS * 1000);
  const x1 = await xacts();
  const h1 = await historyLengths();
  const perMinute = 60 / IDLE_SECONDS;
  const perShard = h1.map((h, i) => Math.round((h - h0[i]!) * perMinute));
  // Our own two measurement transactions are subtracted.
  const result = {
    workers,
    shards: ids.length,
    seconds: IDLE_SECONDS,
    databaseTransactionsPerIdleMinute: Math.round((x1 - x0 - 2) * perMinute),
    historyEventsPerIdleMinutePerShard: perShard,
    historyEventsPerIdleMinutePerShardMedian: median(perShard),
  };
  console.log(`idle (${workers} worker, ${ids.length} shards, ${IDLE_SECONDS} s): ${result.databaseTransactionsPerIdleMinute} database transactions/min in total; history events/min per shard: ${perShard.join(', ')}`);
  return result;
}

async function main() {
  const loadAtStart = loadAverage();
  const startedAt = Date.now();
  console.log(`relay scale-out benchmark: ${SHARDS} shards, batch ${BATCH}, ${EVENTS} events per run; load average ${loadAtStart.join(' ')} on ${os.cpus().length} cores${quick ? ' (quick)' : ''}`);
  const db = await createTestDatabase({ serverUrl: config.database.url, prefix: 'bench_relay_scale' });
  const topic = (await createTestTopic(6, { prefix: 'bench-relay-scale', kafka })).topic;
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const taskQueue = uniqueName('bench-relay-scale-tq');
  const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue };
  const live: RelayWorkerProcess[] = [];
  const ids = Array.from({ length: SHARDS }, (_, i) => uniqueName(`bench-relay-scale-shard-${i}`));
  const steps: { workers: number; spreadSeconds: number; shardsPerWorker: number[]; run: Awaited<ReturnType<typeof throughputRun>> }[] = [];
  try {
    const add = async () => {
      const w = new RelayWorkerProcess(env);
      live.push(w);
      await w.waitUntilRunning();
    };
    await add();
    for (let i = 0; i < SHARDS; i++) {
      await client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, { taskQueue, workflowId: ids[i]!, workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT, args: [{ shardIndex: i, shardCount: SHARDS, batchSize: BATCH }] });
    }
    const step = async () => {
      const spread = await waitSpread(db, client, ids, live);
      const run = await throughputRun(db, live);
      console.log(
        `${live.length} worker(s): shards per worker ${spread.shardsPerWorker.join('/')} (spread in ${spread.seconds} s); ${run.eventsPerSecond} events/s (${EVENTS} in ${run.seconds} s; ${run.cpu.coresBusy} of ${run.cpu.cores} cores busy; load ${run.loadAverage1m})`,
      );
      steps.push({ workers: live.length, spreadSeconds: spread.seconds, shardsPerWorker: spread.shardsPerWorker, run });
    };
    await step();
    await add();
    await step();
    await add();
    await step();
    await live.pop()!.stop();
    await step();
    await live.pop()!.stop();
    await step();
    const idle = await idleRun(db, client, ids, live.length);

    const byWorkers = (n: number) => median(steps.filter((s) => s.workers === n).map((s) => s.run.eventsPerSecond));
    const summary = {
      oneWorkerMedian: byWorkers(1),
      twoWorkersMedian: byWorkers(2),
      threeWorkers: byWorkers(3),
      twoOverOne: +(byWorkers(2) / byWorkers(1)).toFixed(2),
      threeOverOne: +(byWorkers(3) / byWorkers(1)).toFixed(2),
      slowestSpreadSeconds: Math.max(...steps.map((s) => s.spreadSeconds)),
    };
    const loadAtEnd = loadAverage();
    console.log(`\nsummary: 1 → ${summary.oneWorkerMedian}/s, 2 → ${summary.twoWorkersMedian}/s (${summary.twoOverOne}×), 3 → ${summary.threeWorkers}/s (${summary.threeOverOne}×); slowest spread ${summary.slowestSpreadSeconds} s`);
    console.log(`load average: ${loadAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end; ${((Date.now() - startedAt) / 60_000).toFixed(1)} min`);
    const written = await saveBenchmark({
      name: quick ? 'relay-scale-quick' : 'relay-scale',
      command: 'npm run bench:relay-scale',
      settings: {
        shards: SHARDS,
        batchSize: BATCH,
        events: EVENTS,
        order: 'workers 1, 2, 3, then SIGTERM back to 2, 1; one set of shards throughout',
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        minutes: +((Date.now() - startedAt) / 60_000).toFixed(1),
        note: 'PostgreSQL, Kafka, the Temporal dev server and every relay worker share this 2-core machine, which other sessions used at the same time: figures are indicative',
      },
      results: { summary, steps, idle },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `Relay throughput by worker processes (${SHARDS} shards, batch ${BATCH}, ${EVENTS} events per run; ${os.cpus().length} cores shared)`,
        data: { values: steps.map((s, i) => ({ step: `${i + 1}: ${s.workers} worker${s.workers > 1 ? 's' : ''}`, eventsPerSecond: s.run.eventsPerSecond, workers: String(s.workers) })) },
        mark: 'bar',
        encoding: {
          x: { field: 'step', type: 'nominal', title: null, sort: null },
          y: { field: 'eventsPerSecond', type: 'quantitative', title: 'events/s (commit → Kafka ack → marked)' },
          color: { field: 'workers', type: 'nominal', title: 'workers' },
        },
        width: 500,
        height: 300,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    for (const id of ids) await client.workflow.getHandle(id).terminate('benchmark over').catch(() => undefined);
    for (const w of live) await w.kill9();
    await connection.close();
    await deleteTopics([topic], kafka);
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

import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { Kafka, logLevel } from 'kafkajs';
import { loadConfig } from '../config/env';
import type { RelayActivityMode } from '../workflows/relay-contract';
import { createTestTopic, deleteTopics } from '../testkit/kafka';
import { measureCpu } from './support/cpu-usage';
import { probeKafkaSend } from './support/kafka-send-probe';
import { insertBacklog, waitDrained } from './support/outbox-backlog';
import { profileRelayHistory } from './support/relay-history-profile';
import { Relays } from './support/relay-shards';
import { RelayWorkerProcess } from '../testkit/relay-worker-process';
import { median, percentile, saveBenchmark } from './support/report';
import { uniqueName } from '../testkit/ids';
import { createTestDatabase, type TestDatabase } from '../testkit/database';

// Relay benchmark: outbox commit → Kafka ack (acks=all) → marked published. Compares the relay's
// two activity modes side by side in one run — 'remote' (fetch/publish/mark as ordinary
// activities, the original design) and 'local' (local activities, the default) — as ratios of
// medians over repeated, interleaved runs (so machine noise hits both alike):
//   1. throughput: drain 40,000 events committed in 10,000-row transactions while the relays run
//   2. 1 vs 2 worker processes (local mode)
//   3. latency at 1,000 events/s offered: commit (client-side, after COMMIT) → append on the
//      broker (the topic uses message.timestamp.type=LogAppendTime)
//   4. idle cost (local mode): database transactions and history events per idle minute
//   5. kafkajs alone: one send of a relay batch, by acks and message size
// Also recorded per run: CPU seconds by process group (PostgreSQL, Kafka, Temporal, the relay
// worker), and shard 0's history profile. Everything shares this machine with PostgreSQL,
// Kafka and the Temporal dev server, and with whatever else runs on it (load average recorded).
// Run: npm run bench:relay   (about 7 minutes; BENCH_QUICK=1 for a 2-minute smoke run)

const quick = process.env.BENCH_QUICK === '1';
const REPEATS = quick ? 1 : 3;
// Long enough per run (~10 s at 20k/s) that the figure is sustained throughput, not a burst.
const EVENTS = Number(process.env.BENCH_EVENTS ?? (quick ? 20_000 : 200_000));
const LATENCY_SECONDS = quick ? 5 : 10;
const config = loadConfig();
const kafka = new Kafka({ clientId: `relay-bench-${process.pid}`, brokers: config.kafka.brokers, logLevel: logLevel.NOTHING });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

/** Worker processes serving one task queue, started once and reused by every run on it. */
interface WorkerPool {
  taskQueue: string;
  processes: RelayWorkerProcess[];
}

async function startWorkers(db: TestDatabase, topic: string, count: number): Promise<WorkerPool> {
  const taskQueue = uniqueName('bench-relay-tq');
  const processes = Array.from({ length: count }, () => new RelayWorkerProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue }));
  return { taskQueue, processes };
}

interface ThroughputOpts {
  mode: RelayActivityMode;
  batchSize: number;
  shards: number;
}

async function throughputRun(db: TestDatabase, client: Client, workers: WorkerPool, opts: ThroughputOpts) {
  const relays = new Relays(client, workers.taskQueue);
  try {
    await db.pool.query(`TRUNCATE outbox_events; DELETE FROM outbox_relay_layout`);
    // Warm-up: the shards are running, have drained a first few rows and are idle before the
    // clock starts, so the figure is the relay's, not its start-up's.
    await relays.start(opts);
    await insertBacklog(db, 100);
    await waitDrained(db, 60_000, 'warm-up');
    await sleep(300);
    for (const w of workers.processes) w.resetPeakRss();
    const cpu = measureCpu(() => workers.processes.map((p) => p.child.pid!));
    const t0 = Date.now();
    // Committed in 10,000-row transactions while the relays already drain (they wake on NOTIFY).
    await insertBacklog(db, EVENTS);
    const insertSeconds = (Date.now() - t0) / 1000;
    await waitDrained(db, 180_000, 'backlog');
    const seconds = (Date.now() - t0) / 1000;
    const cpuUsage = cpu.stop();
    const peakRssMiB = Math.max(...workers.processes.map((w) => w.peakRssMiB() ?? 0));
    await relays.waitIdle();
    const eventsPerSecond = Math.round(EVENTS / seconds);
    console.log(
      `throughput ${opts.mode.padEnd(6)} batch=${opts.batchSize} shards=${opts.shards} workers=${workers.processes.length}: ${eventsPerSecond} events/s ` +
        `(${EVENTS} in ${seconds.toFixed(2)} s; inserts took ${insertSeconds.toFixed(2)} s; ${cpuUsage.coresBusy} of ${cpuUsage.cores} cores busy; ` +
        `worker peak RSS ${peakRssMiB} MiB; load ${loadAverage()[0]})`,
    );
    return {
      ...opts,
      workers: workers.processes.length,
      events: EVENTS,
      seconds: +seconds.toFixed(2),
      insertSeconds: +insertSeconds.toFixed(2),
      eventsPerSecond,
      peakRssMiB,
      cpu: cpuUsage,
      loadAverage1m: loadAverage()[0],
      profileShard0: await profileRelayHistory(client, relays.workflowIds[0]!),
    };
  } finally {
    await relays.stop();
  }
}

interface LatencyState {
  committedAt: Map<string, number>;
  /** Broker append time per event id; joined with commit times at the end (the relay may
   * publish an event before the producing client has even seen its COMMIT return). */
  appendedAt: Map<string, number>;
}

async function latencyRun(db: TestDatabase, client: Client, workers: WorkerPool, consumerState: LatencyState, mode: RelayActivityMode) {
  const relays = new Relays(client, workers.taskQueue);
  const shards = 2;
  const batchSize = 2000;
  const rate = 1000;
  consumerState.committedAt.clear();
  consumerState.appendedAt.clear();
  try {
    await db.pool.query(`TRUNCATE outbox_events; DELETE FROM outbox_relay_layout`);
    await relays.start({ shards, batchSize, mode });
    await insertBacklog(db, 10);
    await waitDrained(db, 60_000, 'warm-up');
    await sleep(1000);
    // 10 events per transaction every 10 ms = 1,000 events/s, each commit timed by the client.
    const perTx = 10;
    const tickMs = (perTx * 1000) / rate;
    const total = rate * LATENCY_SECONDS;
    const inflight: Promise<void>[] = [];
    const start = Date.now();
    for (let sent = 0, tick = 0; sent < total; sent += perTx, tick++) {
      const due = start + tick * tickMs;
      if (due > Date.now()) await sleep(due - Date.now());
      const ids = Array.from({ length: perTx }, (_, k) => `lat-${tick}-${k}-${start}`);
      inflight.push(
        db.pool
          .query(
            `INSERT INTO outbox_events (event_type, payload)
             SELECT 'payment_confirmed', jsonb_build_object('event_id', e, 'type', 'payment_confirmed', 'account_id', (random() * 1000)::int, 'amount', 1) FROM unnest($1::text[]) e`,
            [ids],
          )
          .then(() => {
            const now = Date.now();
            for (const id of ids) consumerState.committedAt.set(id, now);
          }),
      );
    }
    await Promise.all(inflight);
    const offeredSeconds = (Date.now() - start) / 1000;
    await waitDrained(db, 30_000, 'latency run');
    await relays.waitIdle();
    const received = () => [...consumerState.committedAt.keys()].filter((id) => consumerState.appendedAt.has(id)).length;
    for (let waited = 0; received() < total && waited < 30_000; waited += 200) await sleep(200);
    const sorted = [...consumerState.committedAt].flatMap(([id, c]) => (consumerState.appendedAt.has(id) ? [consumerState.appendedAt.get(id)! - c] : [])).sort((a, b) => a - b);
    const result = {
      mode,
      offeredPerSecond: Math.round(total / offeredSeconds),
      events: total,
      received: sorted.length,
      p50Ms: percentile(sorted, 50),
      p90Ms: percentile(sorted, 90),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted.at(-1),
      shards,
      batchSize,
      loadAverage1m: loadAverage()[0],
    };
    console.log(`latency ${mode.padEnd(6)} at ${result.offeredPerSecond}/s offered: p50 ${result.p50Ms} ms, p90 ${result.p90Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms (${result.received}/${total}; load ${result.loadAverage1m})`);
    return { ...result, profileShard0: await profileRelayHistory(client, relays.workflowIds[0]!) };
  } finally {
    await relays.stop();
  }
}

async function idleRun(db: TestDatabase, client: Client, workers: WorkerPool, seconds: number) {
  const relays = new Relays(client, workers.taskQueue);
  const shards = 2;
  try {
    await db.pool.query(`TRUNCATE outbox_events; DELETE FROM outbox_relay_layout`);
    await relays.start({ shards, batchSize: 2000, mode: 'local' });
    // Long enough for the previous runs' terminated shards' waits to notice (heartbeat, 10 s).
    await sleep(12_000);
    const xacts = async () => {
      await db.pool.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
      const { rows } = await db.pool.query(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = current_database()`);
      return Number(rows[0].n);
    };
    const historyLengths = async () => Promise.all(relays.workflowIds.map(async (id) => Number((await client.workflow.getHandle(id).describe()).historyLength)));
    const x0 = await xacts();
    const h0 = await historyLengths();
    await sleep(seconds * 1000);
    const x1 = await xacts();
    const h1 = await historyLengths();
    const perMinute = 60 / seconds;
    // Our own two measurement transactions are subtracted.
    const result = {
      mode: 'local',
      shards,
      seconds,
      databaseTransactionsPerIdleMinute: Math.round((x1 - x0 - 2) * perMinute),
      historyEventsPerIdleMinutePerShard: h1.map((h, i) => Math.round((h - h0[i]!) * perMinute)),
    };
    console.log(`idle: ${result.databaseTransactionsPerIdleMinute} database transactions/min for ${shards} shards; history events/min per shard: ${result.historyEventsPerIdleMinutePerShard.join(', ')}`);
    return result;
  } finally {
    await relays.stop();
  }
}

const ratio = (a: number, b: number) => +(a / b).toFixed(2);

async function main() {
  const loadAtStart = loadAverage();
  const startedAt = Date.now();
  console.log(`relay benchmark: load average ${loadAtStart.join(' ')} on ${os.cpus().length} cores${quick ? ' (quick)' : ''}`);
  const db = await createTestDatabase({ serverUrl: config.database.url, prefix: 'bench_relay' });
  const topic = (await createTestTopic(6, { prefix: 'bench-relay', logAppendTime: true, kafka })).topic;
  const probeTopic = (await createTestTopic(6, { prefix: 'bench-relay', logAppendTime: true, kafka })).topic;
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  // One worker on its own queue for the single-worker runs, two on another for the scaling run;
  // idle workers only long-poll, which costs nothing measurable.
  const one = await startWorkers(db, topic, 1);
  const two = await startWorkers(db, topic, 2);
  try {
    for (const w of [...one.processes, ...two.processes]) await w.waitUntilRunning();

    // 1. Throughput, remote vs local, interleaved pairs.
    const configs = quick ? [{ batchSize: 2000, shards: 2 }] : [{ batchSize: 2000, shards: 2 }, { batchSize: 5000, shards: 2 }, { batchSize: 5000, shards: 4 }];
    const throughput: Awaited<ReturnType<typeof throughputRun>>[] = [];
    for (let r = 0; r < REPEATS; r++) {
      for (const c of configs) {
        for (const mode of r % 2 === 0 ? (['remote', 'local'] as const) : (['local', 'remote'] as const)) {
          throughput.push(await throughputRun(db, client, one, { ...c, mode }));
        }
      }
    }
    const throughputSummary = configs.map((c) => {
      const of = (mode: RelayActivityMode) => throughput.filter((t) => t.mode === mode && t.batchSize === c.batchSize && t.shards === c.shards).map((t) => t.eventsPerSecond);
      const remote = median(of('remote'));
      const local = median(of('local'));
      const localPeakRss = throughput.filter((t) => t.mode === 'local' && t.batchSize === c.batchSize && t.shards === c.shards).map((t) => t.peakRssMiB);
      return { ...c, remoteMedian: remote, localMedian: local, localOverRemote: ratio(local, remote), remoteRuns: of('remote'), localRuns: of('local'), localPeakRssMiB: Math.max(...localPeakRss) };
    });
    const best = [...throughputSummary].sort((a, b) => b.localMedian - a.localMedian)[0]!;

    // 2. 1 vs 2 worker processes, local mode, best configuration.
    const scaling: Awaited<ReturnType<typeof throughputRun>>[] = [];
    for (let r = 0; r < REPEATS; r++) {
      for (const pool of r % 2 === 0 ? [one, two] : [two, one]) scaling.push(await throughputRun(db, client, pool, { mode: 'local', batchSize: best.batchSize, shards: best.shards }));
    }
    const byWorkers = (n: number) => median(scaling.filter((s) => s.workers === n).map((s) => s.eventsPerSecond));
    const scalingSummary = { batchSize: best.batchSize, shards: best.shards, oneWorkerMedian: byWorkers(1), twoWorkersMedian: byWorkers(2), twoOverOne: ratio(byWorkers(2), byWorkers(1)) };

    // 3. Latency at 1,000 events/s, remote vs local, interleaved.
    const consumerState: LatencyState = { committedAt: new Map(), appendedAt: new Map() };
    const consumer = kafka.consumer({ groupId: uniqueName('bench-relay-latency'), sessionTimeout: 10_000, maxWaitTimeInMs: 20 });
    const latency: Awaited<ReturnType<typeof latencyRun>>[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: false });
      await consumer.run({
        eachMessage: async ({ message }) => {
          const id = message.headers?.['event-id']?.toString();
          // message.timestamp is the broker's append time (LogAppendTime topic); first delivery counts.
          if (id?.startsWith('lat-') && !consumerState.appendedAt.has(id)) consumerState.appendedAt.set(id, Number(message.timestamp));
        },
      });
      await sleep(3000);
      for (let r = 0; r < REPEATS; r++) {
        for (const mode of r % 2 === 0 ? (['remote', 'local'] as const) : (['local', 'remote'] as const)) latency.push(await latencyRun(db, client, one, consumerState, mode));
      }
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
    const latencyOf = (mode: RelayActivityMode, key: 'p50Ms' | 'p99Ms') => median(latency.filter((l) => l.mode === mode).map((l) => l[key]));
    const latencySummary = {
      remote: { p50MsMedian: latencyOf('remote', 'p50Ms'), p99MsMedian: latencyOf('remote', 'p99Ms') },
      local: { p50MsMedian: latencyOf('local', 'p50Ms'), p99MsMedian: latencyOf('local', 'p99Ms') },
      p99RemoteOverLocal: ratio(latencyOf('remote', 'p99Ms'), latencyOf('local', 'p99Ms')),
    };

    // 4. Idle cost. 5. kafkajs alone.
    const idle = await idleRun(db, client, one, quick ? 20 : 60);
    const kafkaProbe = [];
    for (const p of [
      { acks: -1, valueBytes: 150 },
      { acks: 1, valueBytes: 150 },
      { acks: -1, valueBytes: 1000 },
    ] as const) {
      const r = await probeKafkaSend(kafka, probeTopic, { ...p, messagesPerSend: 2000, seconds: quick ? 2 : 4 });
      console.log(`kafkajs send of ${r.messagesPerSend} × ${r.valueBytes} B, acks ${r.acks}: ${r.msPerSendMedian} ms per send (median), ${r.messagesPerSecond} messages/s`);
      kafkaProbe.push(r);
    }

    console.log('\nsummary (medians of', REPEATS, 'runs):');
    for (const s of throughputSummary) {
      console.log(`  throughput batch=${s.batchSize} shards=${s.shards}: remote ${s.remoteMedian}/s, local ${s.localMedian}/s, local/remote ${s.localOverRemote}×; local worker peak RSS ${s.localPeakRssMiB} MiB`);
    }
    console.log(`  workers (local, batch=${scalingSummary.batchSize} shards=${scalingSummary.shards}): 1 → ${scalingSummary.oneWorkerMedian}/s, 2 → ${scalingSummary.twoWorkersMedian}/s (${scalingSummary.twoOverOne}×)`);
    console.log(`  latency at 1,000/s: remote p50 ${latencySummary.remote.p50MsMedian} / p99 ${latencySummary.remote.p99MsMedian} ms; local p50 ${latencySummary.local.p50MsMedian} / p99 ${latencySummary.local.p99MsMedian} ms`);
    // The highest per-run peak of each pool (the high-water mark is reset before every run).
    const workerPeakRssMiB = {
      oneWorker: Math.max(...[...throughput, ...scaling].filter((t) => t.workers === 1).map((t) => t.peakRssMiB)),
      twoWorkers: Math.max(...scaling.filter((t) => t.workers === 2).map((t) => t.peakRssMiB)),
    };
    console.log(`  relay worker peak RSS (VmHWM, any run): ${workerPeakRssMiB.oneWorker} MiB alone, ${workerPeakRssMiB.twoWorkers} MiB with two workers`);
    const loadAtEnd = loadAverage();
    console.log(`  load average: ${loadAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end; ${((Date.now() - startedAt) / 60_000).toFixed(1)} min`);

    const written = await saveBenchmark({
      name: 'relay',
      command: 'npm run bench:relay',
      settings: {
        events: EVENTS,
        repeats: REPEATS,
        partitions: 6,
        acks: 'all',
        latencyOffered: '1,000 events/s for ' + LATENCY_SECONDS + ' s, 10 events per transaction',
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        minutes: +((Date.now() - startedAt) / 60_000).toFixed(1),
        note: 'PostgreSQL, Kafka, the Temporal dev server (SQLite) and the relay worker share this machine; other test runs may add noise',
      },
      results: { throughputSummary, scalingSummary, latencySummary, workerPeakRssMiB, throughput, scaling, latency, idle, kafkaProbe },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `Outbox relay, remote vs local activities (medians of ${REPEATS} runs; load ${loadAtStart[0]} on ${os.cpus().length} cores)`,
        hconcat: [
          {
            title: 'commit → Kafka ack → marked (events/s, 1 worker)',
            data: { values: throughputSummary.flatMap((s) => (['remote', 'local'] as const).map((mode) => ({ config: `batch ${s.batchSize}, ${s.shards} shards`, mode, eventsPerSecond: mode === 'local' ? s.localMedian : s.remoteMedian }))) },
            mark: 'bar',
            encoding: {
              x: { field: 'config', type: 'nominal', title: null },
              xOffset: { field: 'mode' },
              y: { field: 'eventsPerSecond', type: 'quantitative', title: 'events/s' },
              color: { field: 'mode', type: 'nominal', title: 'activities' },
            },
            width: 360,
            height: 300,
          },
          {
            title: 'commit → on Kafka at 1,000 events/s (ms)',
            data: { values: (['remote', 'local'] as const).flatMap((mode) => [{ mode, stat: 'p50', ms: latencySummary[mode].p50MsMedian }, { mode, stat: 'p99', ms: latencySummary[mode].p99MsMedian }]) },
            mark: 'bar',
            encoding: {
              x: { field: 'stat', type: 'nominal', title: null },
              xOffset: { field: 'mode' },
              y: { field: 'ms', type: 'quantitative', title: 'ms' },
              color: { field: 'mode', type: 'nominal', title: 'activities' },
            },
            width: 200,
            height: 300,
          },
        ],
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    for (const w of [...one.processes, ...two.processes]) await w.kill9();
    await connection.close();
    await deleteTopics([topic, probeTopic], kafka);
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

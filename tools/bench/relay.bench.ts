import '../local-stack/apply-stack-env';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { Kafka, logLevel } from 'kafkajs';
import { loadStackConfig } from '../local-stack/stack-config';
import type { RelayActivityMode } from '../../workflows/relay/contract';
import { createTestTopic, deleteTopics } from '../../test/kit/kafka';
import { measureCpu, microsPerEvent } from './support/cpu-usage';
import { committedTransactions } from './support/database-activity';
import { probeKafkaSend } from './support/kafka-send-probe';
import { insertBacklog, waitDrained } from './support/outbox-backlog';
import { profileRelayHistory } from './support/relay-history-profile';
import { Relays, relayDefaults } from './support/relay-shards';
import { throughputRun, type WorkerPool } from './support/relay-throughput';
import { RelayWorkerProcess } from '../../test/kit/relay-worker-process';
import { commandLine, median, percentile, saveBenchmark } from './support/report';
import { tailEpisodes } from './support/latency-tail';
import { uniqueName } from '../../test/kit/ids';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';

// Relay benchmark: outbox commit → Kafka ack (acks=all) → marked published, at the settings a
// user gets from `npm start` (src/config/env.ts: relay sessions, RELAY_SHARDS, RELAY_BATCH_SIZE). The
// default 'session' mode runs beside 'local' (local activities in the worker that holds the shard,
// the mode before sessions and still a choice) as ratios of medians over repeated, interleaved
// runs (so machine noise hits both alike):
//   1. throughput: drain BENCH_EVENTS (200,000) events committed in 10,000-row transactions
//      while the relays run, after one unrecorded 50,000-event run per mode; CPU seconds per
//      process group and per event
//   2. latency at 1,000 events/s offered: commit (client-side, after COMMIT) → append on the
//      broker (the topic uses message.timestamp.type=LogAppendTime), after one unrecorded run per
//      mode
//   3. idle cost at the defaults: database transactions and history events per idle minute
//   4. kafkajs alone: one send of a relay batch, by acks and message size
// Scale-out over worker processes is measured by bench:relay-scale and bench:scaling. Everything
// shares this machine with PostgreSQL, Kafka and the Temporal dev server, and with whatever else
// runs on it (load average recorded).
// Run: npm run bench:relay   (about 5 minutes; BENCH_QUICK=1 for a 2-minute smoke run, BENCH_NAME=x saves
// tools/bench/results/x.json instead of relay.json)

const quick = process.env.BENCH_QUICK === '1';
const REPEATS = quick ? 1 : 3;
// Long enough per run (~10 s at 20k/s) that the figure is sustained throughput, not a burst.
const EVENTS = Number(process.env.BENCH_EVENTS ?? (quick ? 20_000 : 200_000));
// BENCH_LATENCY_SECONDS lengthens each latency run, to study its tail (its p99 of 10 s is the 100 slowest events).
const LATENCY_SECONDS = Number(process.env.BENCH_LATENCY_SECONDS ?? (quick ? 5 : 10));
const WARM_UP_EVENTS = quick ? 0 : 50_000;
// bench/results/<name>.json; another name keeps a side run from replacing the figures docs/performance.md quotes.
const RESULT_NAME = process.env.BENCH_NAME ?? 'relay';
const config = loadStackConfig();
const DEFAULTS = relayDefaults(config);
const MODES: RelayActivityMode[] = ['session', 'local'];
const kafka = new Kafka({ clientId: `relay-bench-${process.pid}`, brokers: config.kafka.brokers, logLevel: logLevel.NOTHING });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

async function startWorkers(db: TestDatabase, topic: string, count: number): Promise<WorkerPool> {
  const taskQueue = uniqueName('bench-relay-tq');
  // BENCH_WORKER_NODE_ARGS: Node flags for the relay worker (e.g. --trace-gc, beside the latency runs' tail episodes).
  const nodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const processes = Array.from({ length: count }, () => new RelayWorkerProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue }, nodeArgs));
  return { taskQueue, processes };
}

interface LatencyState {
  committedAt: Map<string, number>;
  /** Broker append time per event id; joined with commit times at the end (the relay may
   * publish an event before the producing client has even seen its COMMIT return). */
  appendedAt: Map<string, number>;
}

async function latencyRun(db: TestDatabase, client: Client, workers: WorkerPool, consumerState: LatencyState, mode: RelayActivityMode) {
  const relays = new Relays(client, workers.taskQueue);
  const { shards, batchSize } = DEFAULTS;
  const rate = 1000;
  consumerState.committedAt.clear();
  consumerState.appendedAt.clear();
  try {
    await db.pool.query(`TRUNCATE temporal_outbox.outbox_events; UPDATE temporal_outbox.outbox_relay_layout SET shard_count = NULL`);
    await relays.start({ shards, batchSize, mode });
    await insertBacklog(db, 10);
    await waitDrained(db, 60_000, 'warm-up');
    await sleep(1000);
    // 10 events per transaction every 10 ms = 1,000 events/s, each commit timed by the client.
    const perTx = 10;
    const tickMs = (perTx * 1000) / rate;
    const total = rate * LATENCY_SECONDS;
    const inflight: Promise<void>[] = [];
    // At a trickle the cost is per commit and per batch, not per event: what each event costs
    // PostgreSQL (its transactions, the relay's polls among them) and the CPU, per process.
    const transactionsBefore = await committedTransactions(db.pool);
    const cpu = measureCpu(() => workers.processes.map((p) => p.child.pid!), { databaseName: db.name });
    const start = Date.now();
    for (let sent = 0, tick = 0; sent < total; sent += perTx, tick++) {
      const due = start + tick * tickMs;
      if (due > Date.now()) await sleep(due - Date.now());
      const ids = Array.from({ length: perTx }, (_, k) => `lat-${tick}-${k}-${start}`);
      inflight.push(
        db.pool
          .query(
            `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
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
    // Costs up to the last mark, not through the drain grace after it (sessions waiting cost
    // nothing, but the other processes' background work would be billed to the events).
    const cpuMicrosPerEvent = microsPerEvent(cpu.stop().cpuSeconds, total);
    const pgTransactionsPerEvent = +(((await committedTransactions(db.pool)) - transactionsBefore) / total).toFixed(2);
    await relays.waitIdle();
    const received = () => [...consumerState.committedAt.keys()].filter((id) => consumerState.appendedAt.has(id)).length;
    for (let waited = 0; received() < total && waited < 30_000; waited += 200) await sleep(200);
    const joined = [...consumerState.committedAt].flatMap(([id, c]) => (consumerState.appendedAt.has(id) ? [{ committed: c, ms: consumerState.appendedAt.get(id)! - c }] : []));
    const sorted = joined.map((j) => j.ms).sort((a, b) => a - b);
    // p99 of each second of commits: a tail from one moment (a handover, a pause) shows as one
    // second far above the others, a tail spread over the run as all of them.
    const p99MsBySecond = Array.from({ length: LATENCY_SECONDS }, (_, sec) => {
      const inSecond = joined.filter((j) => Math.floor((j.committed - start) / 1000) === sec).map((j) => j.ms).sort((a, b) => a - b);
      return inSecond.length > 0 ? percentile(inSecond, 99) : null;
    });
    const p99Ms = percentile(sorted, 99);
    const tail = tailEpisodes(joined, start, p99Ms);
    const result = {
      mode,
      offeredPerSecond: Math.round(total / offeredSeconds),
      events: total,
      received: sorted.length,
      p50Ms: percentile(sorted, 50),
      p90Ms: percentile(sorted, 90),
      p99Ms,
      maxMs: sorted.at(-1),
      p99MsBySecond,
      tailEpisodes: tail,
      shards,
      batchSize,
      loadAverage1m: loadAverage()[0],
      cpuMicrosPerEvent,
      pgTransactionsPerEvent,
    };
    console.log(`latency ${mode.padEnd(6)} at ${result.offeredPerSecond}/s offered: p50 ${result.p50Ms} ms, p90 ${result.p90Ms} ms, p99 ${result.p99Ms} ms, max ${result.maxMs} ms (${result.received}/${total}; load ${result.loadAverage1m}); p99 by second ${p99MsBySecond.join(' ')}; ${pgTransactionsPerEvent} PostgreSQL transactions per event; CPU µs per event ${JSON.stringify(cpuMicrosPerEvent)}`);
    console.log(`  tail (events ≥ p99, by commit time): ${tail.map((t) => `${(t.atMs / 1000).toFixed(2)} s ×${t.events} ≤${t.maxMs} ms`).join(', ')}`);
    return { ...result, profileShard0: await profileRelayHistory(client, relays.workflowIds[0]!) };
  } finally {
    await relays.stop();
  }
}

async function idleRun(db: TestDatabase, client: Client, workers: WorkerPool, seconds: number) {
  const relays = new Relays(client, workers.taskQueue);
  const { shards, batchSize, mode } = DEFAULTS;
  try {
    await db.pool.query(`TRUNCATE temporal_outbox.outbox_events; UPDATE temporal_outbox.outbox_relay_layout SET shard_count = NULL`);
    await relays.start({ shards, batchSize, mode });
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
      mode,
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
  const one = await startWorkers(db, topic, 1);
  try {
    for (const w of one.processes) await w.waitUntilRunning();

    // 1. Throughput at the defaults, session vs local, interleaved (ABBA…).
    const order = (r: number) => (r % 2 === 0 ? MODES : [...MODES].reverse());
    const throughput: Awaited<ReturnType<typeof throughputRun>>[] = [];
    // One unrecorded run per mode first: the worker's JIT, Kafka's JVM and PostgreSQL's caches are
    // warm before the clock starts. Without it the first recorded run was the slowest, or near it, in three of
    // four full runs (2026-12-05 09:52–10:13: first runs 15,532, 18,002, 19,455, 16,521 against
    // medians of 18,377–19,144), most of all right after a stack restart.
    if (WARM_UP_EVENTS > 0) for (const mode of MODES) await throughputRun(db, client, one, { ...DEFAULTS, mode }, WARM_UP_EVENTS);
    for (let r = 0; r < REPEATS; r++) for (const mode of order(r)) throughput.push(await throughputRun(db, client, one, { ...DEFAULTS, mode }, EVENTS));
    const runsOf = (mode: RelayActivityMode) => throughput.filter((t) => t.mode === mode);
    /** Median CPU microseconds per event of each process group over a mode's runs. */
    const cpuPerEvent = (mode: RelayActivityMode) => {
      const groups = [...new Set(runsOf(mode).flatMap((t) => Object.keys(t.cpuMicrosPerEvent)))];
      return Object.fromEntries(groups.map((g) => [g, median(runsOf(mode).map((t) => t.cpuMicrosPerEvent[g] ?? 0))]));
    };
    const throughputSummary = {
      shards: DEFAULTS.shards,
      batchSize: DEFAULTS.batchSize,
      defaultMode: DEFAULTS.mode,
      byMode: Object.fromEntries(
        MODES.map((mode) => [mode, { median: median(runsOf(mode).map((t) => t.eventsPerSecond)), runs: runsOf(mode).map((t) => t.eventsPerSecond), peakRssMiB: Math.max(...runsOf(mode).map((t) => t.peakRssMiB)), cpuMicrosPerEvent: cpuPerEvent(mode) }]),
      ) as Record<RelayActivityMode, { median: number; runs: number[]; peakRssMiB: number; cpuMicrosPerEvent: Record<string, number> }>,
    };
    const sessionOverLocal = ratio(throughputSummary.byMode.session.median, throughputSummary.byMode.local.median);

    // 2. Latency at 1,000 events/s at the defaults, session vs local, interleaved.
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
      // One unrecorded run per mode first, as for throughput: a trickle takes other paths than a
      // backlog (small produce requests, the latency consumer's fetches), and Kafka's JVM was still
      // compiling them in the first recorded run (2026-12-05: its C2 compiler thread 13–45 % busy
      // then, under 1 % by the third; that run's Kafka CPU per event 868 µs against 337–462 after,
      // on a Kafka started minutes before).
      if (!quick) for (const mode of MODES) await latencyRun(db, client, one, consumerState, mode);
      for (let r = 0; r < REPEATS; r++) for (const mode of order(r)) latency.push(await latencyRun(db, client, one, consumerState, mode));
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
    const latencyOf = (mode: RelayActivityMode, key: 'p50Ms' | 'p99Ms' | 'pgTransactionsPerEvent') => median(latency.filter((l) => l.mode === mode).map((l) => l[key]));
    const latencySummary = Object.fromEntries(
      MODES.map((mode) => [mode, { p50MsMedian: latencyOf(mode, 'p50Ms'), p99MsMedian: latencyOf(mode, 'p99Ms'), pgTransactionsPerEventMedian: latencyOf(mode, 'pgTransactionsPerEvent') }]),
    ) as Record<RelayActivityMode, { p50MsMedian: number; p99MsMedian: number; pgTransactionsPerEventMedian: number }>;

    // 3. Idle cost. 4. kafkajs alone.
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
    for (const mode of MODES) {
      const t = throughputSummary.byMode[mode];
      const cpu = Object.entries(t.cpuMicrosPerEvent).map(([g, us]) => `${g} ${us}`).join(', ');
      console.log(`  ${mode}${mode === DEFAULTS.mode ? ' (default)' : ''}, batch ${DEFAULTS.batchSize}, ${DEFAULTS.shards} shards: ${t.median}/s (runs ${t.runs.join(', ')}); worker peak RSS ${t.peakRssMiB} MiB; CPU µs per event: ${cpu}`);
      console.log(`    latency at 1,000/s: p50 ${latencySummary[mode].p50MsMedian} / p99 ${latencySummary[mode].p99MsMedian} ms; ${latencySummary[mode].pgTransactionsPerEventMedian} PostgreSQL transactions per event`);
    }
    console.log(`  session / local throughput: ${sessionOverLocal}×`);
    const loadAtEnd = loadAverage();
    console.log(`  load average: ${loadAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end; ${((Date.now() - startedAt) / 60_000).toFixed(1)} min`);

    const written = await saveBenchmark({
      name: RESULT_NAME,
      // As run, with the BENCH_ and KAFKAJS_ settings it was given (KAFKAJS_LEAN_ENCODER=false: docs/relay.md).
      command: commandLine('bench:relay', ['BENCH_', 'KAFKAJS_']),
      settings: {
        events: EVENTS,
        repeats: REPEATS,
        unrecordedWarmUpEventsPerMode: WARM_UP_EVENTS,
        unrecordedLatencyRunsPerMode: quick ? 0 : 1,
        partitions: 6,
        acks: 'all',
        latencyOffered: '1,000 events/s for ' + LATENCY_SECONDS + ' s, 10 events per transaction',
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        minutes: +((Date.now() - startedAt) / 60_000).toFixed(1),
        note: 'PostgreSQL, Kafka, the Temporal dev server (SQLite) and the relay worker share this machine; other test runs may add noise',
      },
      results: { throughputSummary, sessionOverLocal, latencySummary, throughput, latency, idle, kafkaProbe },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `Outbox relay at the defaults (${DEFAULTS.shards} shards, batch ${DEFAULTS.batchSize}): relay sessions vs local activities (medians of ${REPEATS} runs; load ${loadAtStart[0]} on ${os.cpus().length} cores)`,
        hconcat: [
          {
            title: 'commit → Kafka ack → marked (events/s, 1 worker)',
            data: { values: MODES.map((mode) => ({ mode, eventsPerSecond: throughputSummary.byMode[mode].median })) },
            mark: 'bar',
            encoding: {
              x: { field: 'mode', type: 'nominal', title: null },
              y: { field: 'eventsPerSecond', type: 'quantitative', title: 'events/s' },
              color: { field: 'mode', type: 'nominal', title: 'activities' },
            },
            width: 360,
            height: 300,
          },
          {
            title: 'commit → on Kafka at 1,000 events/s (ms)',
            data: { values: MODES.flatMap((mode) => [{ mode, stat: 'p50', ms: latencySummary[mode].p50MsMedian }, { mode, stat: 'p99', ms: latencySummary[mode].p99MsMedian }]) },
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
    for (const w of one.processes) await w.kill9();
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

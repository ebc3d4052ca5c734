import '../local-stack/apply-stack-env';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startWorkerEntry, stopChildWorkers, type ChildWorker } from '../local-stack/child-processes';
import { loadStackConfig } from '../local-stack/stack-config';
import { createKafka } from '../../src/kafka/client';
import { ensureTopics } from '../../src/kafka/topics';
import { exampleConsumerEntry } from '../../examples/payments/worker-entries';
import { createTestDatabase } from '../../test/kit/database';
import { startFaultProxy } from '../../test/kit/fault-proxy';
import { uniqueName } from '../../test/kit/ids';
import { createTestTopic, deleteTopics } from '../../test/kit/kafka';
import { RelayWorkerProcess } from '../../test/kit/relay-worker-process';
import { offerCredits, waitCredited } from './support/credit-load';
import { readAppendTimes, readFlights, runLatency, type RunLatency } from './support/pipeline-stages';
import { Relays, relayDefaults } from './support/relay-shards';
import { throughputRun } from './support/relay-throughput';
import { commandLine, median, saveBenchmark } from './support/report';
import { startZoneLinks } from './support/zone-links';

// Across availability zones: every link of every worker process to every service (PostgreSQL,
// Kafka, Temporal) goes through a proxy of its own (Toxiproxy), and the runs alternate between
// those proxies adding nothing ("0 ms") and adding a 20 ms round trip ± 5 ms ("20 ms"), in one
// run on the same processes, so the latency is the only difference. Measured, medians of
// interleaved repeats (0, 20, 20, 0, 0, 20 ...):
//   1. relay throughput at the defaults: drain BENCH_EVENTS (200,000) events committed while the
//      shards run (bench:relay's run), one relay worker, no consumer;
//   2. at 1,000 events/s offered, a relay worker and the example's consumer worker: commit → on
//      Kafka (broker append time) and commit → credited (inbox processed_at), p50 and p99, with
//      each event's stages (bench:pipeline's accounting).
// The workers take every RELAY_ and CONSUMER_ setting from this process's environment, so a
// candidate default is tried by setting it on the command line (it is saved with the results).
//   npm run bench:zones     (about 12 minutes; BENCH_QUICK=1 for a smoke run; BENCH_NAME=x saves x.json;
//                            BENCH_RTT_MS=20 BENCH_JITTER_MS=5)

const quick = process.env.BENCH_QUICK === '1';
const REPEATS = Number(process.env.BENCH_REPEATS ?? (quick ? 1 : 3));
const EVENTS = Number(process.env.BENCH_EVENTS ?? (quick ? 20_000 : 200_000));
const RATE = 1000;
const SECONDS = quick ? 5 : 15;
const WARM_SECONDS = 3;
const ACCOUNTS = 100;
const RTT_MS = Number(process.env.BENCH_RTT_MS ?? 20);
const JITTER_MS = Number(process.env.BENCH_JITTER_MS ?? 5);
const RESULT_NAME = process.env.BENCH_NAME ?? 'cross-zone';
// BENCH_PARTS=latency (or throughput) runs one part: a quick look at one candidate setting.
const PARTS = new Set((process.env.BENCH_PARTS ?? 'throughput,latency').split(',').map((p) => p.trim()));
const SETTINGS = [
  { name: '0 ms', roundTripMs: 0, jitterMs: 0 },
  { name: `${RTT_MS} ms`, roundTripMs: RTT_MS, jitterMs: JITTER_MS },
] as const;
type Setting = (typeof SETTINGS)[number];
/** Repeat r runs the settings in order, r+1 reversed: drift over the run hits both alike. */
const order = (r: number): readonly Setting[] => (r % 2 === 0 ? SETTINGS : [...SETTINGS].reverse());
const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

async function main() {
  const startedAt = Date.now();
  const loadAtStart = loadAverage();
  console.log(`cross-zone benchmark: ${SETTINGS.map((s) => s.name).join(' vs ')} round trip (jitter ±${JITTER_MS} ms) on every worker link; load ${loadAtStart.join(' ')} on ${os.cpus().length} cores${quick ? ' (quick)' : ''}`);
  const base = loadStackConfig();
  const db = await createTestDatabase({ serverUrl: base.database.url, prefix: 'bench_zones' });
  const env: Record<string, string | undefined> = { ...process.env, DATABASE_URL: db.url };
  const config = loadStackConfig(env);
  const defaults = relayDefaults(config);
  const kafka = createKafka(config, 'bench-zones');
  const proxy = await startFaultProxy({ log: (m) => console.log(m) });
  const links = await startZoneLinks(proxy, config, env, ['relay-throughput', 'relay', 'consumer']);
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const topics: string[] = [];
  const children: ChildWorker[] = [];
  const relayProcesses: RelayWorkerProcess[] = [];
  try {
    const throughput: { setting: string; eventsPerSecond: number; seconds: number; peakRssMiB: number; loadAverage1m: number | undefined }[] = [];
    if (PARTS.has('throughput')) {
      // 1. Throughput: one relay worker, its own topic and task queue.
      const throughputTopic = (await createTestTopic(config.kafka.partitions, { prefix: 'bench-zones', kafka })).topic;
      topics.push(throughputTopic);
      const throughputQueue = uniqueName('bench-zones-relay-tq');
      const throughputWorker = new RelayWorkerProcess({ ...definedOnly(env), ...links.env('relay-throughput'), KAFKA_TOPIC: throughputTopic, RELAY_TASK_QUEUE: throughputQueue });
      relayProcesses.push(throughputWorker);
      await throughputWorker.waitUntilRunning(180_000);
      const pool = { taskQueue: throughputQueue, processes: [throughputWorker] };
      // One unrecorded run at each setting first (JIT, caches, the proxies' first connections).
      for (const s of SETTINGS) {
        await links.setRoundTrip(s.roundTripMs, s.jitterMs);
        await throughputRun(db, client, pool, defaults, quick ? 5_000 : 50_000);
      }
      for (let r = 0; r < REPEATS; r++) {
        for (const s of order(r)) {
          await links.setRoundTrip(s.roundTripMs, s.jitterMs);
          const t = await throughputRun(db, client, pool, defaults, EVENTS);
          console.log(`  (that run: ${s.name})`);
          throughput.push({ setting: s.name, eventsPerSecond: t.eventsPerSecond, seconds: t.seconds, peakRssMiB: t.peakRssMiB, loadAverage1m: t.loadAverage1m });
        }
      }
      await throughputWorker.kill9();
    }

    const latency: (RunLatency & { setting: string; repeat: number; loadAverage: number[] })[] = [];
    let balancesExact: boolean | undefined;
    if (PARTS.has('latency')) {
      // 2. Latency at 1,000 events/s through the whole pipeline: a relay worker and a consumer worker, both across the zone.
      const topic = (await createTestTopic(config.kafka.partitions, { prefix: 'bench-zones', logAppendTime: true, kafka })).topic;
      topics.push(topic, `${topic}.dlq`);
      const pipelineEnv = { ...definedOnly(env), KAFKA_TOPIC: topic, KAFKA_DEAD_LETTER_TOPIC: `${topic}.dlq`, CONSUMER_GROUP: uniqueName('bench-zones'), CONSUMER_TASK_QUEUE: uniqueName('bench-zones-credit'), RELAY_TASK_QUEUE: uniqueName('bench-zones-relay') };
      await ensureTopics(kafka, loadStackConfig(pipelineEnv));
      await db.pool.query('TRUNCATE temporal_outbox.outbox_events; UPDATE temporal_outbox.outbox_relay_layout SET shard_count = NULL');
      await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
      const relay = new RelayWorkerProcess({ ...pipelineEnv, ...links.env('relay') });
      relayProcesses.push(relay);
      const logDir = path.join(config.local.cacheDir, 'logs', uniqueName('bench-zones'));
      // info: the consumer's 'batch applied' line per workflow carries the stage timestamps.
      const consumer = startWorkerEntry('consumer', exampleConsumerEntry(), logDir, { ...pipelineEnv, ...links.env('consumer'), LOG_LEVEL: 'info' });
      children.push(consumer);
      await relay.waitUntilRunning(180_000);
      const relays = new Relays(client, pipelineEnv.RELAY_TASK_QUEUE);
      await relays.start(defaults);
      let produced = 0;
      const produce = async (seconds: number, tag: string) => {
        produced += await offerCredits(db.pool, { rate: RATE, seconds, tag, accounts: ACCOUNTS });
        await waitCredited(db.pool, produced);
      };
      const runs: { setting: string; repeat: number; tag: string; startedAt: number; endedAt: number; loadAverage: number[] }[] = [];
      // The first run also covers the consumer's start and joining its group (the events wait on the topic meanwhile).
      for (const s of SETTINGS) {
        await links.setRoundTrip(s.roundTripMs, s.jitterMs);
        await produce(WARM_SECONDS + SECONDS, uniqueName('unrecorded'));
      }
      for (let r = 0; r < REPEATS; r++) {
        for (const s of order(r)) {
          await links.setRoundTrip(s.roundTripMs, s.jitterMs);
          await produce(WARM_SECONDS, uniqueName('warm'));
          const tag = `run${runs.length}`;
          const load = loadAverage();
          const runStart = Date.now();
          await produce(SECONDS, tag);
          runs.push({ setting: s.name, repeat: r, tag, startedAt: runStart, endedAt: Date.now(), loadAverage: load });
          console.log(`latency run ${runs.length} (${s.name}) done; load ${load.join(' ')}`);
        }
      }
      await relays.stop();
      await links.setRoundTrip(0);
      const appended = await readAppendTimes(kafka, topic, uniqueName('bench-zones-reader'), produced);
      const flights = readFlights(consumer.logFile);
      for (const r of runs) {
        const l = await runLatency(db.pool, r.tag, appended, flights, r.startedAt, r.endedAt);
        latency.push({ setting: r.setting, repeat: r.repeat, loadAverage: r.loadAverage, ...l });
        const st = l.stages;
        console.log(
          `${r.setting} #${r.repeat + 1}: on Kafka p50 ${l.onKafka.p50Ms} / p99 ${l.onKafka.p99Ms} ms; credited p50 ${l.credited.p50Ms} / p99 ${l.credited.p99Ms} ms; ` +
            `stages p50 (p99): relay ${st.relay.p50Ms} (${st.relay.p99Ms}), Kafka → consumer ${st.kafkaToConsumer.p50Ms} (${st.kafkaToConsumer.p99Ms}), wait for a flight ${st.waitForFlight.p50Ms} (${st.waitForFlight.p99Ms}), workflow start → credit ${st.workflowStartToCredit.p50Ms} (${st.workflowStartToCredit.p99Ms}); ${l.eventsPerWorkflow} events per workflow`,
        );
      }
      const { rows: balance } = await db.pool.query('SELECT sum(balance)::bigint AS total FROM accounts');
      balancesExact = Number(balance[0].total) === produced * 100;
    }

    const med = (xs: number[]) => Math.round(median(xs));
    const bySetting = SETTINGS.map((s) => {
      const t = throughput.filter((x) => x.setting === s.name);
      const l = latency.filter((x) => x.setting === s.name);
      return {
        setting: s.name,
        roundTripMs: s.roundTripMs,
        jitterMs: s.jitterMs,
        throughput: { eventsPerSecondMedian: med(t.map((x) => x.eventsPerSecond)), runs: t.map((x) => x.eventsPerSecond) },
        onKafka: { p50MsMedian: med(l.map((x) => x.onKafka.p50Ms)), p99MsMedian: med(l.map((x) => x.onKafka.p99Ms)) },
        credited: { p50MsMedian: med(l.map((x) => x.credited.p50Ms)), p99MsMedian: med(l.map((x) => x.credited.p99Ms)) },
        stagesP50Median: Object.fromEntries((['relay', 'kafkaToConsumer', 'waitForFlight', 'workflowStartToCredit'] as const).map((k) => [k, med(l.map((x) => x.stages[k].p50Ms))])),
        eventsPerWorkflowMedian: med(l.map((x) => x.eventsPerWorkflow)),
      };
    });
    const [near, far] = bySetting as [(typeof bySetting)[0], (typeof bySetting)[0]];
    const loadAtEnd = loadAverage();
    const minutes = +((Date.now() - startedAt) / 60_000).toFixed(1);
    console.log(`\nsummary, medians of ${REPEATS} runs (relay ${defaults.shards} shards, batch ${defaults.batchSize}; balances exact: ${balancesExact}; load ${loadAtStart.join(' ')} → ${loadAtEnd.join(' ')}; ${minutes} min):`);
    // A part left out (BENCH_PARTS) is left out of the lines too.
    const measuredThroughput = PARTS.has('throughput');
    const measuredLatency = PARTS.has('latency');
    for (const s of bySetting) {
      const parts = [
        ...(measuredThroughput ? [`relay ${s.throughput.eventsPerSecondMedian} events/s (runs ${s.throughput.runs.join(', ')})`] : []),
        ...(measuredLatency ? [`at ${RATE}/s: on Kafka p50 ${s.onKafka.p50MsMedian} / p99 ${s.onKafka.p99MsMedian} ms, credited p50 ${s.credited.p50MsMedian} / p99 ${s.credited.p99MsMedian} ms`] : []),
      ];
      console.log(`  ${s.setting.padEnd(6)} ${parts.join('; ')}`);
    }
    const signed = (ms: number) => `${ms >= 0 ? '+' : '−'}${Math.abs(ms)} ms`;
    const differences = [
      ...(measuredThroughput ? [`throughput ${(far.throughput.eventsPerSecondMedian / near.throughput.eventsPerSecondMedian).toFixed(2)}×`] : []),
      ...(measuredLatency
        ? [
            `on Kafka p50 ${signed(far.onKafka.p50MsMedian - near.onKafka.p50MsMedian)}, p99 ${signed(far.onKafka.p99MsMedian - near.onKafka.p99MsMedian)}`,
            `credited p50 ${signed(far.credited.p50MsMedian - near.credited.p50MsMedian)}, p99 ${signed(far.credited.p99MsMedian - near.credited.p99MsMedian)}`,
          ]
        : []),
    ];
    console.log(`  ${far.setting} against ${near.setting}: ${differences.join('; ')}`);

    const written = await saveBenchmark({
      name: RESULT_NAME,
      command: commandLine('bench:zones', ['BENCH_', 'RELAY_', 'CONSUMER_']),
      settings: {
        links: 'each worker process reaches PostgreSQL, the Kafka broker(s) and Temporal through a Toxiproxy proxy of its own; the benchmark itself (producer, readers) connects directly',
        latency: `round trip ${RTT_MS} ms ± ${JITTER_MS} ms: ${Math.floor(RTT_MS / 2)} ± ${Math.floor(JITTER_MS / 2)} ms worker → service, ${Math.ceil(RTT_MS / 2)} ± ${Math.ceil(JITTER_MS / 2)} ms back (Toxiproxy latency toxics)`,
        order: 'interleaved: the settings in order, then reversed, ...; one unrecorded run at each setting before each part',
        repeats: REPEATS,
        throughputEvents: EVENTS,
        rate: RATE,
        secondsPerLatencyRun: SECONDS,
        relay: defaults,
        consumer: { batchSize: config.consumer.batchSize, maxInFlight: config.consumer.maxInFlight, fetchMaxWaitMs: config.consumer.fetchMaxWaitMs, coalesceWindowMs: config.consumer.coalesceWindowMs },
        partitions: config.kafka.partitions,
        accounts: ACCOUNTS,
        loadAtStart,
        loadAtEnd,
        minutes,
        note: 'PostgreSQL, Kafka, the Temporal dev server, the proxies and the workers share this machine',
      },
      results: { bySetting, balancesExact, throughput, latency },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `Across zones: ${near.setting} vs ${far.setting} round trip (± ${JITTER_MS} ms) on every worker link, defaults, medians of ${REPEATS} runs`,
        hconcat: [
          {
            title: 'relay throughput (events/s)',
            data: { values: bySetting.map((s) => ({ setting: s.setting, eventsPerSecond: s.throughput.eventsPerSecondMedian })) },
            mark: 'bar',
            encoding: { x: { field: 'setting', type: 'nominal', title: null }, y: { field: 'eventsPerSecond', type: 'quantitative', title: 'events/s' }, color: { field: 'setting', type: 'nominal', title: 'round trip' } },
            width: 220,
            height: 300,
          },
          {
            title: `latency at ${RATE} events/s (ms)`,
            data: {
              values: bySetting.flatMap((s) => [
                { setting: s.setting, stat: 'on Kafka p50', ms: s.onKafka.p50MsMedian },
                { setting: s.setting, stat: 'on Kafka p99', ms: s.onKafka.p99MsMedian },
                { setting: s.setting, stat: 'credited p50', ms: s.credited.p50MsMedian },
                { setting: s.setting, stat: 'credited p99', ms: s.credited.p99MsMedian },
              ]),
            },
            mark: 'bar',
            encoding: {
              x: { field: 'stat', type: 'nominal', title: null, sort: ['on Kafka p50', 'on Kafka p99', 'credited p50', 'credited p99'] },
              xOffset: { field: 'setting' },
              y: { field: 'ms', type: 'quantitative', title: 'ms' },
              color: { field: 'setting', type: 'nominal', title: 'round trip' },
            },
            width: 420,
            height: 300,
          },
        ],
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    for (const p of relayProcesses) await p.kill9();
    await stopChildWorkers(children, 5000);
    await connection.close();
    await proxy.close();
    await deleteTopics(topics, kafka);
    await db.drop();
  }
}

/** The environment without its unset variables (what a child process's env takes). */
function definedOnly(env: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

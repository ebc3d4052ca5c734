import '../local-stack/apply-stack-env';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TopLevelSpec } from 'vega-lite';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, wireMessage, type ConsumerProcess } from '../../test/kit/consumer-harness';
import { loadStackConfig } from '../local-stack/stack-config';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';
import { uniqueName } from '../../test/kit/ids';
import { procStatusKiB } from '../../test/kit/process-memory';
import { createTestTopic, testKafka } from '../../test/kit/kafka';
import { measureCpu, microsPerEvent, postmasterPidOf } from './support/cpu-usage';
import { commandLine, median, percentile, saveBenchmark } from './support/report';
import { eventually } from '../../test/kit/wait';

// Consumer benchmark, against the real local stack (its own database, topics, group, queue):
//  1. sustained credits/s: preload N payment events on a topic, start the consumer worker(s),
//     and time from the first credit to the last (worker startup excluded);
//  2. latency at a steady offered load: produce R events/s for D seconds, each stamped with its
//     send time (the created-at header), and measure send -> credited (the inbox row's
//     processed_at, i.e. the crediting transaction's start, on the same machine's clock).
//
//   npm run bench:consumer
//   BENCH_EVENTS=200000 BENCH_WORKERS=1 BENCH_PARTITIONS=6 BENCH_RATE=1000 BENCH_SECONDS=30 npm run bench:consumer
//   BENCH_WORKER_NODE_ARGS=--max-semi-space-size=16 BENCH_NAME=consumer-semi16 npm run bench:consumer
//   BENCH_ACCOUNTS=100000 npm run bench:consumer   (credits spread over more accounts: fewer shared row locks)

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 1);
const PARTITIONS = Number(process.env.BENCH_PARTITIONS ?? 6);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const ACCOUNTS = Number(process.env.BENCH_ACCOUNTS ?? 1000);
// The workers inherit CONSUMER_* settings from this environment; unset, they run the defaults.
const BATCH_SIZE = loadStackConfig().consumer.batchSize;
// Node flags after the worker's own (e.g. --max-semi-space-size=16): memory against throughput.
const EXTRA_NODE_ARGS = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);

async function startWorkers(db: TestDatabase, topic: string, group: string, n: number): Promise<ConsumerProcess[]> {
  const taskQueue = uniqueName('bench-consumer');
  const workers = Array.from({ length: n }, () =>
    spawnConsumer(consumerEnv({ databaseUrl: db.url, topic, group, taskQueue, partitions: PARTITIONS, extra: { LOG_LEVEL: 'info' } }), undefined, EXTRA_NODE_ARGS),
  );
  await Promise.all(workers.map(waitUntilRunning));
  return workers;
}

/** Resident memory of one worker process (Linux), in MiB. */
function rssMiB(pid: number | undefined): number {
  const kib = pid === undefined ? undefined : procStatusKiB(pid)?.VmRSS;
  return kib === undefined ? 0 : Math.round(kib / 1024);
}

async function throughput(db: TestDatabase) {
  const { topic, remove } = await createTestTopic(PARTITIONS);
  const kafka = testKafka();
  const producer = kafka.producer();
  await producer.connect();
  const preloadStart = performance.now();
  for (let i = 0; i < EVENTS; i += 5000) {
    const messages = [];
    for (let j = i; j < Math.min(EVENTS, i + 5000); j++) messages.push(wireMessage({ event_id: `tp-${j}`, account_id: 1 + (j % ACCOUNTS), amount: 1 + (j % 1000) }, j));
    await producer.send({ topic, messages });
  }
  await producer.disconnect();
  console.log(`preloaded ${EVENTS} events in ${Math.round(performance.now() - preloadStart)} ms`);

  const group = uniqueName('bench-tp');
  const workers = await startWorkers(db, topic, group, WORKERS);
  const wallStart = performance.now();
  // Who spent the machine's two cores while the backlog drained (issue 13: CPU per event per process).
  const cpu = measureCpu(() => workers.map((w) => w.proc.pid!), { workerLabel: 'consumer worker', postmasterPid: await postmasterPidOf(db.pool), databaseName: db.name });
  let maxRssMiB = 0;
  const sampler = setInterval(() => (maxRssMiB = Math.max(maxRssMiB, ...workers.map((w) => rssMiB(w.proc.pid)))), 250);
  await eventually('all events credited', () => groupCaughtUp(kafka, group, topic), 600_000, 500);
  clearInterval(sampler);
  const cpuUsage = cpu.stop();
  const wallMs = performance.now() - wallStart;
  const { rows } = await db.pool.query<{ n: number; span_ms: number }>(
    `SELECT count(*)::int AS n, extract(epoch FROM max(processed_at) - min(processed_at)) * 1000 AS span_ms FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE 'tp-%'`,
  );
  const { n, span_ms: spanMs } = rows[0]!;
  const chunks = workers.flatMap((w) => w.logs.filter((l) => l.msg === 'batch applied'));
  const workflowMs = chunks.map((c) => c.workflowMs as number).sort((a, b) => a - b);
  const perSecond = new Map<number, number>();
  const { rows: timeline } = await db.pool.query<{ second: number; credits: number }>(
    `SELECT floor(extract(epoch FROM processed_at - (SELECT min(processed_at) FROM temporal_outbox.inbox_processed_events)))::int AS second, count(*)::int AS credits
     FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE 'tp-%' GROUP BY 1 ORDER BY 1`,
  );
  for (const t of timeline) perSecond.set(t.second, t.credits);
  for (const w of workers) await w.stop();
  await remove();
  const result = {
    events: EVENTS,
    credited: n,
    creditsPerSecond: Math.round(n / (Math.max(spanMs, 1) / 1000)),
    firstToLastCreditMs: Math.round(spanMs),
    wallMsAfterWorkersReady: Math.round(wallMs),
    workflows: chunks.length,
    // Started on this worker with their first task in the start response (workers/temporal-worker.ts).
    eagerlyStarted: chunks.filter((c) => c.eagerlyStarted === true).length,
    eventsPerWorkflow: Math.round(n / Math.max(1, chunks.length)),
    workflowRoundTripMs: { p50: percentile(workflowMs, 50), p99: percentile(workflowMs, 99), max: workflowMs[workflowMs.length - 1] },
    maxWorkerRssMiB: maxRssMiB,
    // From the workers' start being ready to the group caught up, so it includes the wind-down.
    cpuMicrosPerEvent: microsPerEvent(cpuUsage.cpuSeconds, n),
    coresBusy: cpuUsage.coresBusy,
  };
  console.log('throughput', result);
  return { result, timeline };
}

async function latency(db: TestDatabase) {
  const { topic, remove } = await createTestTopic(PARTITIONS);
  const kafka = testKafka();
  const group = uniqueName('bench-lat');
  const workers = await startWorkers(db, topic, group, WORKERS);
  // Let the group settle before the clock starts.
  await sleep(2000);
  const producer = kafka.producer();
  await producer.connect();
  const sentAt = new Map<string, number>();
  const tickMs = 10;
  const perTick = Math.max(1, Math.round((RATE * tickMs) / 1000));
  const start = Date.now();
  let seq = 0;
  const sends: Promise<unknown>[] = [];
  while (Date.now() - start < SECONDS * 1000) {
    const due = Math.floor(((Date.now() - start) / 1000) * RATE);
    const messages = [];
    while (seq < due && messages.length < perTick * 5) {
      const now = new Date();
      const id = `lat-${seq}`;
      sentAt.set(id, now.getTime());
      messages.push(wireMessage({ event_id: id, account_id: 1 + (seq % ACCOUNTS), amount: 1 }, seq, now));
      seq++;
    }
    if (messages.length > 0) sends.push(producer.send({ topic, messages }));
    await sleep(tickMs);
  }
  await Promise.all(sends);
  await producer.disconnect();
  const offered = seq / SECONDS;
  await eventually('all latency events credited', () => groupCaughtUp(kafka, group, topic), 120_000, 500);
  const { rows } = await db.pool.query<{ event_id: string; at: string }>(
    `SELECT event_id, (extract(epoch FROM processed_at) * 1000)::float8 AS at FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE 'lat-%'`,
  );
  const samples = rows.map((r) => ({ id: r.event_id, sentMs: sentAt.get(r.event_id)! - start, latencyMs: Number(r.at) - sentAt.get(r.event_id)! }));
  const sorted = samples.map((s) => s.latencyMs).sort((a, b) => a - b);
  const chunks = workers.flatMap((w) => w.logs.filter((l) => l.msg === 'batch applied'));
  const wf = chunks.map((c) => c.workflowMs as number).sort((a, b) => a - b);
  for (const w of workers) await w.stop();
  await remove();
  const result = {
    offeredPerSecond: Math.round(offered),
    events: seq,
    credited: samples.length,
    latencyMs: { p50: Math.round(median(sorted)), p90: Math.round(percentile(sorted, 90)), p99: Math.round(percentile(sorted, 99)), max: Math.round(sorted[sorted.length - 1] ?? NaN) },
    targetP99Ms: 300,
    workflows: chunks.length,
    eagerlyStarted: chunks.filter((c) => c.eagerlyStarted === true).length,
    eventsPerWorkflow: Math.round(samples.length / Math.max(1, chunks.length)),
    // Where the time goes: the Temporal round trip (start workflow -> activity -> result) per chunk.
    workflowRoundTripMs: { p50: percentile(wf, 50), p90: percentile(wf, 90), p99: percentile(wf, 99), max: wf[wf.length - 1] },
  };
  console.log('latency', result);
  return { result, samples };
}

async function main() {
  const db = await createTestDatabase();
  try {
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
    const tp = await throughput(db);
    const lat = await latency(db);
    // Thin the scatter to keep the chart light.
    const step = Math.max(1, Math.floor(lat.samples.length / 5000));
    const chart: TopLevelSpec = {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: `Consumer: ${tp.result.creditsPerSecond} credits/s sustained; latency at ${lat.result.offeredPerSecond} ev/s p50 ${lat.result.latencyMs.p50} ms, p99 ${lat.result.latencyMs.p99} ms`,
      hconcat: [
        {
          title: `credits per second (preloaded ${EVENTS}, ${WORKERS} worker(s), ${PARTITIONS} partitions)`,
          width: 420,
          height: 260,
          data: { values: tp.timeline },
          mark: { type: 'bar' },
          encoding: { x: { field: 'second', type: 'ordinal', title: 'second since first credit' }, y: { field: 'credits', type: 'quantitative', title: 'credits' } },
        },
        {
          title: `send -> credited latency at ${lat.result.offeredPerSecond} events/s`,
          width: 420,
          height: 260,
          layer: [
            { data: { values: lat.samples.filter((_, i) => i % step === 0) }, mark: { type: 'point', size: 6, opacity: 0.4 }, encoding: { x: { field: 'sentMs', type: 'quantitative', title: 'sent at (ms)' }, y: { field: 'latencyMs', type: 'quantitative', title: 'latency (ms)' } } },
            { data: { values: [{ y: 300 }] }, mark: { type: 'rule', color: 'red' }, encoding: { y: { field: 'y', type: 'quantitative' } } },
          ],
        },
      ],
    };
    const files = await saveBenchmark({
      name: process.env.BENCH_NAME ?? 'consumer',
      // With the CONSUMER_ settings the workers inherited (e.g. a fetch bound being compared).
      command: commandLine('bench:consumer', ['BENCH_', 'CONSUMER_']),
      settings: { events: EVENTS, workers: WORKERS, partitions: PARTITIONS, accounts: ACCOUNTS, consumerBatchSize: BATCH_SIZE, extraWorkerNodeArgs: EXTRA_NODE_ARGS, offeredRate: RATE, seconds: SECONDS, note: 'shared 2-core machine; other sessions may be running tests at the same time' },
      results: { throughput: tp.result, latency: lat.result },
      chart,
    });
    console.log(`saved ${files.join(', ')}`);
  } finally {
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

import '../local-stack/apply-stack-env';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startWorkerEntry, stopChildWorkers, type ChildWorker } from '../local-stack/child-processes';
import { waitForPollers } from '../local-stack/wait-for-workers';
import { loadStackConfig } from '../local-stack/stack-config';
import { createKafka } from '../../src/kafka/client';
import { ensureTopics, topicConfigEntries } from '../../src/kafka/topics';
import { startRelays } from '../../src/outbox/relay-control';
import { readAppendTimes, readFlights, runLatency, type RunLatency } from './support/pipeline-stages';
import { measureCpu, microsPerEvent, postmasterPidOf } from './support/cpu-usage';
import { median, saveBenchmark } from './support/report';
import { committedTransactions } from './support/database-activity';
import { offerCredits, waitCredited } from './support/credit-load';
import { createTestDatabase } from '../../test/kit/database';
import { workerEntry } from '../../workers/entries';
import { exampleConsumerEntry } from '../../examples/payments/worker-entries';

// The whole pipeline's latency, end to end: outbox commit → relay → Kafka → consumer → balance
// credited, at 1,000 events/s offered, with a relay worker and a consumer worker as real
// processes at their defaults (issue 13's targets: commit → on Kafka p99 ≤ 100 ms in every run;
// commit → credited p99 ≤ 200 ms and p50 ≤ 80 ms). Consumer variants run side by side in the
// same run, interleaved (ABC CBA ABC), each in a consumer worker of its own started with the
// variant's settings (same group, so it picks up where the last one left off); the relay worker
// runs throughout. Each event's time is split into stages (tools/bench/support/pipeline-stages.ts).
//   npm run bench:pipeline      (RATE=1000 SECONDS=15 BENCH_REPEATS=3; BENCH_VARIANTS=a,b to run some)

const RATE = Number(process.env.RATE ?? 1000);
const SECONDS = Number(process.env.SECONDS ?? 15);
const REPEATS = Number(process.env.BENCH_REPEATS ?? (SECONDS <= 5 ? 1 : 3));
const WARM_SECONDS = 3;
const ACCOUNTS = 100;

interface Variant {
  name: string;
  /** Consumer settings on top of the defaults. */
  env: Record<string, string>;
}

/**
 * The consumer's knobs that bear on latency. 'defaults' is what `npm start` runs (coalescing
 * window 2 ms); 'coalesce window 0 ms' is the consumer before the window existed; 'no fetch
 * ahead' the consumer before it fetched ahead of a large fetch, 'fetch ahead always' one that
 * fetches ahead of every fetch however small.
 */
const ALL_VARIANTS: Variant[] = [
  { name: 'defaults', env: {} },
  { name: 'coalesce window 0 ms', env: { CONSUMER_COALESCE_WINDOW_MS: '0' } },
  { name: 'coalesce window 5 ms', env: { CONSUMER_COALESCE_WINDOW_MS: '5' } },
  { name: 'max in flight 1', env: { CONSUMER_MAX_IN_FLIGHT: '1' } },
  { name: 'batch 100, max in flight 6', env: { CONSUMER_BATCH_SIZE: '100', CONSUMER_MAX_IN_FLIGHT: '6' } },
  { name: 'fetch max wait 100 ms', env: { CONSUMER_FETCH_MAX_WAIT_MS: '100' } },
  { name: 'fetch ahead always', env: { CONSUMER_FETCH_AHEAD_MIN_EVENTS: '0' } },
  { name: 'no fetch ahead', env: { CONSUMER_FETCH_AHEAD_MIN_EVENTS: '1000000' } },
];
const chosen = process.env.BENCH_VARIANTS?.split(',').map((s) => s.trim());
// A quick run (the suite's smoke mode) measures the defaults only.
const VARIANTS = ALL_VARIANTS.filter((v) => (chosen ? chosen.includes(v.name) : SECONDS > 5 || v.name === 'defaults'));

interface RunRecord {
  variant: string;
  repeat: number;
  tag: string;
  logFile: string;
  startedAt: number;
  endedAt: number;
  loadAverage: number[];
  /** CPU µs per event by process during the run (its events produced, then drained). */
  cpuMicrosPerEvent: Record<string, number>;
  coresBusy: number;
  /** Transactions the benchmark's database committed per event during the run (pg_stat_database). */
  pgTransactionsPerEvent: number;
}

const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

async function main() {
  const base = loadStackConfig();
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
    RELAY_WORKFLOW_ID_PREFIX: `bench-pipeline-relay-${suffix}`,
    LOG_LEVEL: 'warn',
  };
  const config = loadStackConfig(env);
  const kafka = createKafka(config, 'bench-pipeline');
  // The events topic stamps each message with the broker's append time (else the relay's own
  // clock), so "on Kafka" is when Kafka had it; created here with ensureTopics' settings plus that.
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      {
        topic: config.kafka.topic,
        numPartitions: config.kafka.partitions,
        replicationFactor: config.kafka.replicationFactor,
        configEntries: [...topicConfigEntries(config), { name: 'message.timestamp.type', value: 'LogAppendTime' }],
      },
    ],
  });
  await admin.disconnect();
  await ensureTopics(kafka, config);
  await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
  const logDir = path.join(config.local.cacheDir, 'logs', `bench-pipeline-${suffix}`);
  const relayWorker = startWorkerEntry('relay-worker', workerEntry('relay'), logDir, env);
  const consumerWorkers: ChildWorker[] = [];
  const startConsumer = (name: string, variant: Variant) => {
    // info: the 'batch applied' line per workflow carries the stage timestamps.
    const w = startWorkerEntry(name, exampleConsumerEntry(), logDir, { ...env, ...variant.env, LOG_LEVEL: 'info' });
    consumerWorkers.push(w);
    return w;
  };
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const relayIds = Array.from({ length: config.relay.shards }, (_, i) => config.relay.workflowId(i));
  // Which Temporal ran it (dev server on SQLite, or TEMPORAL_SERVER=postgres), recorded and in the file name, so both are kept side by side.
  const cluster = await connection.workflowService.getClusterInfo({});
  const temporal = { serverVersion: cluster.serverVersion, persistenceStore: cluster.persistenceStore, visibilityStore: cluster.visibilityStore, historyShards: cluster.historyShardCount };
  // The single-process server and the cluster share a persistence store; the setting tells them apart.
  const benchName = temporal.persistenceStore === 'sqlite' ? 'pipeline' : process.env.TEMPORAL_SERVER === 'cluster' ? 'pipeline-temporal-cluster' : `pipeline-temporal-${temporal.persistenceStore}`;
  const startedAt = Date.now();
  const loadAtStart = loadAverage();
  const postmasterPid = await postmasterPidOf(db.pool);
  try {
    await waitForPollers(client, [config.relay.taskQueue!], 180_000);
    // The relay at its defaults: RELAY_SHARDS shards, RELAY_BATCH_SIZE, relay sessions.
    await startRelays({ client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: config.relay.batchSize, workflowId: config.relay.workflowId }, config.relay.shards);

    let produced = 0;
    const produce = async (seconds: number, tag: string) => {
      produced += await offerCredits(db.pool, { rate: RATE, seconds, tag, accounts: ACCOUNTS });
    };
    const drained = () => waitCredited(db.pool, produced);

    // One full-length run before the recorded ones, not recorded. The first recorded run used to
    // pay for the services warming up: in each of the seven committed runs of 2026-12-05 it had
    // the highest Kafka CPU per event of the 24 runs, 1.06–2.24× the highest of the others (the
    // broker's JIT compiling its small-request paths, as in bench:relay's first latency run).
    {
      const worker = startConsumer('consumer-unrecorded', VARIANTS[0]!);
      await produce(WARM_SECONDS + SECONDS, 'unrecorded');
      await drained();
      await stopChildWorkers([worker], 20_000);
    }

    // Interleaved: ABC, CBA, ABC … so drift over the run (load, table growth) hits every variant alike.
    const runs: RunRecord[] = [];
    for (let repeat = 0; repeat < REPEATS; repeat++) {
      for (const variant of repeat % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
        const index = runs.length;
        const worker = startConsumer(`consumer-${index}`, variant);
        // The warm-up also covers the worker's start and its joining the group (the events wait on the topic meanwhile).
        await produce(WARM_SECONDS, `warm${index}`);
        await drained();
        const load = loadAverage();
        const runStart = Date.now();
        const producedBefore = produced;
        // At this rate the cost is per flight and per fetch, not per event: where the cores go says what the latency waits for.
        const transactionsBefore = await committedTransactions(db.pool);
        const cpu = measureCpu(() => ({ 'relay worker': [relayWorker.process.pid!], 'consumer worker': [worker.process.pid!] }), { postmasterPid, databaseName: db.name });
        await produce(SECONDS, `run${index}`);
        await drained();
        const cpuUsage = cpu.stop();
        const cpuMicros = microsPerEvent(cpuUsage.cpuSeconds, produced - producedBefore);
        const pgTransactionsPerEvent = +(((await committedTransactions(db.pool)) - transactionsBefore) / (produced - producedBefore)).toFixed(2);
        runs.push({ variant: variant.name, repeat, tag: `run${index}`, logFile: worker.logFile, startedAt: runStart, endedAt: Date.now(), loadAverage: load, cpuMicrosPerEvent: cpuMicros, coresBusy: cpuUsage.coresBusy, pgTransactionsPerEvent });
        console.log(`run ${index + 1}: ${variant.name} (repeat ${repeat + 1}) done; load ${load.join(' ')}; ${cpuUsage.coresBusy} cores busy; CPU µs per event ${JSON.stringify(cpuMicros)}; ${pgTransactionsPerEvent} PostgreSQL transactions per event`);
        await stopChildWorkers([worker], 20_000);
      }
    }

    // Every event's broker append time, read back once all runs are over (nothing else is competing for CPU then).
    const appended = await readAppendTimes(kafka, config.kafka.topic, `bench-pipeline-reader-${suffix}`, produced);
    const measured: (RunLatency & Pick<RunRecord, 'variant' | 'repeat' | 'loadAverage' | 'cpuMicrosPerEvent' | 'coresBusy' | 'pgTransactionsPerEvent'>)[] = [];
    for (const r of runs) {
      const latency = await runLatency(db.pool, r.tag, appended, readFlights(r.logFile), r.startedAt, r.endedAt);
      measured.push({ variant: r.variant, repeat: r.repeat, loadAverage: r.loadAverage, cpuMicrosPerEvent: r.cpuMicrosPerEvent, coresBusy: r.coresBusy, pgTransactionsPerEvent: r.pgTransactionsPerEvent, ...latency });
      const s = latency.stages;
      console.log(
        `${r.variant} #${r.repeat + 1}: commit → credited p50 ${latency.credited.p50Ms} / p99 ${latency.credited.p99Ms} ms; on Kafka p50 ${latency.onKafka.p50Ms} / p99 ${latency.onKafka.p99Ms} ms; ` +
          `stages p50 (p99): relay ${s.relay.p50Ms} (${s.relay.p99Ms}), Kafka → consumer ${s.kafkaToConsumer.p50Ms} (${s.kafkaToConsumer.p99Ms}), wait for a flight ${s.waitForFlight.p50Ms} (${s.waitForFlight.p99Ms}), ` +
          `workflow start → credit ${s.workflowStartToCredit.p50Ms} (${s.workflowStartToCredit.p99Ms}); ${latency.workflows} workflows, ${latency.eventsPerWorkflow} events each, round trip p50 ${latency.workflowRoundTrip.p50Ms} ms; slowest seconds (on Kafka / credited max): ${latency.slowestSeconds.map((x) => `s${x.second} ${x.onKafkaMaxMs}/${x.creditedMaxMs} ms`).join(', ')}`,
      );
    }

    const { rows: balance } = await db.pool.query('SELECT sum(balance)::bigint AS total FROM accounts');
    const exact = Number(balance[0].total) === produced * 100;
    const med = (xs: number[]) => Math.round(median(xs));
    const summarize = (name: string) => {
      const rs = measured.filter((m) => m.variant === name);
      const stage = (k: keyof RunLatency['stages']) => ({ p50Ms: med(rs.map((r) => r.stages[k].p50Ms)), p99Ms: med(rs.map((r) => r.stages[k].p99Ms)) });
      return {
        name,
        env: VARIANTS.find((v) => v.name === name)!.env,
        events: rs.reduce((n, r) => n + r.events, 0),
        p50MsMedian: med(rs.map((r) => r.credited.p50Ms)),
        p99MsMedian: med(rs.map((r) => r.credited.p99Ms)),
        onKafkaP50MsMedian: med(rs.map((r) => r.onKafka.p50Ms)),
        onKafkaP99MsMedian: med(rs.map((r) => r.onKafka.p99Ms)),
        stages: { relay: stage('relay'), kafkaToConsumer: stage('kafkaToConsumer'), waitForFlight: stage('waitForFlight'), workflowStartToCredit: stage('workflowStartToCredit') },
        workflowRoundTripP50Ms: med(rs.map((r) => r.workflowRoundTrip.p50Ms)),
        eventsPerWorkflow: med(rs.map((r) => r.eventsPerWorkflow)),
        coresBusyMedian: +median(rs.map((r) => r.coresBusy)).toFixed(2),
        pgTransactionsPerEventMedian: +median(rs.map((r) => r.pgTransactionsPerEvent)).toFixed(2),
        runs: rs.map((r) => ({ repeat: r.repeat + 1, p50Ms: r.credited.p50Ms, p90Ms: r.credited.p90Ms, p99Ms: r.credited.p99Ms, maxMs: r.credited.maxMs, onKafka: r.onKafka, stages: r.stages, creditToWorkflowResult: r.creditToWorkflowResult, events: r.events, eventsWithStages: r.eventsWithStages, workflows: r.workflows, eventsPerWorkflow: r.eventsPerWorkflow, workflowRoundTrip: r.workflowRoundTrip, slowestSeconds: r.slowestSeconds, loadAverage: r.loadAverage, coresBusy: r.coresBusy, cpuMicrosPerEvent: r.cpuMicrosPerEvent, pgTransactionsPerEvent: r.pgTransactionsPerEvent })),
      };
    };
    const variants = VARIANTS.map((v) => summarize(v.name));
    // BENCH_VARIANTS may leave the defaults out (a diagnostic run): the first variant stands in.
    const defaults = variants.find((v) => v.name === 'defaults') ?? variants[0]!;
    const defaultRuns = measured.filter((m) => m.variant === defaults.name);
    const loadAtEnd = loadAverage();
    console.log(`\npipeline on Temporal ${temporal.serverVersion} (${temporal.persistenceStore}) at ${RATE}/s, ${SECONDS} s per run, ${REPEATS} runs per variant, medians of the runs (balances exact: ${exact}; load ${loadAtStart.join(' ')} → ${loadAtEnd.join(' ')}; ${((Date.now() - startedAt) / 60_000).toFixed(1)} min):`);
    for (const v of variants) {
      console.log(`  ${v.name.padEnd(28)} credited p50 ${v.p50MsMedian} / p99 ${v.p99MsMedian} ms (runs ${v.runs.map((r) => `${r.p50Ms}/${r.p99Ms}`).join(', ')}); on Kafka p99 ${v.runs.map((r) => r.onKafka.p99Ms).join(', ')} ms; ${v.eventsPerWorkflow} events per workflow; ${v.coresBusyMedian} cores busy; ${v.pgTransactionsPerEventMedian} PostgreSQL transactions per event`);
    }

    const written = await saveBenchmark({
      name: benchName,
      command: 'npm run bench:pipeline',
      settings: {
        temporal,
        rate: RATE,
        secondsPerRun: SECONDS,
        repeats: REPEATS,
        order: 'interleaved: variants in order, then reversed, then in order',
        unrecordedRunsBefore: 1,
        accounts: ACCOUNTS,
        relayShards: config.relay.shards,
        relayBatchSize: config.relay.batchSize,
        partitions: config.kafka.partitions,
        eventsPerTransaction: 10,
        loadAtStart,
        loadAtEnd,
        minutes: +((Date.now() - startedAt) / 60_000).toFixed(1),
        clocks:
          'one machine, one clock: outbox created_at and inbox processed_at (start of the crediting transaction) from PostgreSQL, append time from the broker (LogAppendTime topic), receipt and workflow start from the consumer (its "batch applied" log line)',
        stages: 'relay = append − created_at; Kafka → consumer = receipt − append; wait for a flight = workflow start − receipt; workflow start → credit = processed_at − workflow start',
      },
      results: {
        // The defaults' figures (docs/performance.md's table reads these): medians of their runs' p50 and p99; events summed.
        events: defaults.events,
        p50Ms: defaults.p50MsMedian,
        p99Ms: defaults.p99MsMedian,
        balancesExact: exact,
        onKafka: { p50MsMedian: defaults.onKafkaP50MsMedian, p99MsMedian: defaults.onKafkaP99MsMedian, p99MsRuns: defaultRuns.map((r) => r.onKafka.p99Ms), everyRunP99Within100Ms: defaultRuns.every((r) => r.onKafka.p99Ms <= 100) },
        stages: defaults.stages,
        variants,
      },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `commit → balance credited at ${RATE}/s, each run's p50 and p99 (${REPEATS} runs per variant, interleaved)`,
        data: { values: variants.flatMap((v) => v.runs.flatMap((r) => [{ variant: v.name, percentile: 'p50', ms: r.p50Ms }, { variant: v.name, percentile: 'p99', ms: r.p99Ms }])) },
        mark: { type: 'point', filled: true, size: 80 },
        encoding: {
          y: { field: 'variant', type: 'nominal', title: null, sort: VARIANTS.map((v) => v.name) },
          x: { field: 'ms', type: 'quantitative', title: 'commit → credited (ms)' },
          color: { field: 'percentile', type: 'nominal' },
        },
        width: 700,
        height: 300,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    for (const id of relayIds) await client.workflow.getHandle(id).terminate('benchmark over').catch(() => undefined);
    await connection.close();
    await stopChildWorkers([relayWorker, ...consumerWorkers], 5000);
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

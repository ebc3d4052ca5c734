import '../local-stack/apply-stack-env';
import os from 'node:os';
import { AssignerProtocol, type Admin } from 'kafkajs';
import { loadStackConfig } from '../local-stack/stack-config';
import { consumerEnv, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../../test/kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';
import { uniqueName } from '../../test/kit/ids';
import { createTestTopic, deleteTopics, testKafka } from '../../test/kit/kafka';
import { eventually } from '../../test/kit/wait';
import { assertCapHeld, cappedCurveChart, CappedWorkerSet, cpuControllerOrExit, interleavedOrder, loadAverage, meterCapUse, printCappedSummary, summarizeCappedRuns, type CapUse } from './support/capped-scaling';
import { measureCpu, microsPerEvent, postmasterPidOf } from './support/cpu-usage';
import { saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';
import { modelFromRuns } from './support/scaling-model';

// Consumer scale-out where the worker is the bottleneck: what would take the consumer toward the
// BRIEF's 50,000 credits/s (issue 13, point 2). One consumer worker is held to its main thread, and
// on two cores shared with PostgreSQL, Kafka and Temporal a second uncapped worker only competes for
// the same cores (bench:consumer with BENCH_WORKERS=2). So, as bench:scaling does for the relay,
// every consumer worker process runs in a cgroup of its own capped to the same CPU share, and 1, 2
// and 3 workers of one group (the defaults, 6 partitions) are compared, interleaved 1 2 3 3 2 1 1 2 3.
//
// One topic and one group throughout; workers are added, or stopped with SIGTERM, with no
// configuration change, each moved into its cgroup once it runs. Before each timed run the
// benchmark waits until the group's assignment names exactly the live workers, each holding a
// partition, and sends 20,000 events through the group as it stands (a worker that just joined
// has cold code). Timed: the events are produced and the clock runs until every one is credited
// and its offset committed; the run is rejected if the inbox does not hold exactly its events,
// the balances did not grow by exactly their amounts, or the group rebalanced meanwhile. In the
// same window: CPU per credit per component (/proc), each worker's CPU per wall second against
// its cap, with its cgroup's throttling counters. Each partition is consumed by one worker, so
// the events on the busiest worker's partitions bound the spread as shards bound the relay's.
// Run: npm run bench:consumer-scaling   (about 7 minutes; BENCH_QUICK=1: 20,000 events, one repeat, about 1)
//
// The cap: 0.2 CPU per worker by default (BENCH_CPU_CAP), as bench:scaling's. At 0.3 three workers
// and the benchmark's producer (30–50 µs of its own CPU per event sent) took 1.8 of the 2 cores
// and the workers were throttled in only 51–75 % of periods: the machine, not the workers, set the
// pace, and two full runs gave 2 / 1 = 2.28× and 1.78×. At 0.2 every worker was throttled in 80–100 %
// of periods and the services kept under 1.4 cores (docs/measurements/consumer-log.md, "Where the
// worker is the bottleneck").

const quick = process.env.BENCH_QUICK === '1';
const config = loadStackConfig();
const EVENTS = Number(process.env.BENCH_EVENTS ?? (quick ? 20_000 : 200_000));
const WARMUP_EVENTS = quick ? 4_000 : 20_000;
const REPEATS = Number(process.env.BENCH_REPEATS ?? (quick ? 1 : 3));
const CAP = Number(process.env.BENCH_CPU_CAP ?? 0.2);
const PARTITIONS = config.kafka.partitions;
const ACCOUNTS = 1_000;
const ORDER = interleavedOrder(REPEATS);
/** The BRIEF's target for credits through the inbox: the model says how many cores it takes. */
const BRIEF_CREDITS_PER_SECOND = 50_000;
const kafka = testKafka(`consumer-scaling-bench-${process.pid}`);

type CappedConsumer = CappedWorkerSet<ConsumerProcess>['live'][number];

/** Events in the relay's wire format, `run`'s own ids; amounts 1..1000, so every run adds a known sum. */
function runEvents(run: string, count: number) {
  return Array.from({ length: count }, (_, j) => ({ event_id: `${run}-${j}`, account_id: 1 + (j % ACCOUNTS), amount: 1 + (j % 1000) }));
}

async function produce(topic: string, run: string, count: number): Promise<number> {
  const events = runEvents(run, count);
  await produceEvents(kafka, topic, events, 5000);
  return events.reduce((sum, e) => sum + e.amount, 0);
}

/** Each partition's end offset now. */
async function partitionEnds(admin: Admin, topic: string): Promise<Map<number, number>> {
  return new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)]));
}

/** Partitions per member of the group as it stands. */
async function assignment(admin: Admin, group: string, topic: string): Promise<number[][]> {
  const [described] = (await admin.describeGroups([group])).groups;
  return (described?.members ?? []).map((m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[topic] ?? []);
}

/** Produces `events` events and waits until the group has credited and committed them all; returns their amounts' sum. */
async function creditThrough(topic: string, group: string, runName: string, events: number): Promise<number> {
  const sum = await produce(topic, runName, events);
  await eventually('every event credited and committed', () => groupCaughtUp(kafka, group, topic), 900_000, 250);
  return sum;
}

const balancesSum = async (db: TestDatabase) => Number((await db.pool.query('SELECT coalesce(sum(balance), 0)::bigint AS s FROM accounts')).rows[0].s);

interface Bench {
  db: TestDatabase;
  admin: Admin;
  topic: string;
  group: string;
  live: CappedConsumer[];
}

async function timedRun(b: Bench, runName: string) {
  const { db, admin, topic, group, live } = b;
  const members = await assignment(admin, group, topic);
  const endsBefore = await partitionEnds(admin, topic);
  const sumBefore = await balancesSum(db);
  const loadBefore = loadAverage();
  const cpu = measureCpu(() => live.map((w) => w.pid), { workerLabel: 'consumer worker', postmasterPid: await postmasterPidOf(db.pool), databaseName: db.name });
  const capUse = meterCapUse(live);
  const t0 = Date.now();
  const produced = await creditThrough(topic, group, runName, EVENTS);
  const seconds = (Date.now() - t0) / 1000;
  const usage = cpu.stop();
  const uses: CapUse[] = capUse.stop(seconds);
  assertCapHeld(uses, CAP);
  const { rows } = await db.pool.query<{ n: number; span_ms: number }>(
    `SELECT count(*)::int AS n, extract(epoch FROM max(processed_at) - min(processed_at)) * 1000 AS span_ms FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE $1`,
    [`${runName}-%`],
  );
  const added = (await balancesSum(db)) - sumBefore;
  if (rows[0]!.n !== EVENTS || added !== produced) throw new Error(`run ${runName}: ${rows[0]!.n} of ${EVENTS} events in the inbox, balances up by ${added} of ${produced}: no figure reported`);
  if (JSON.stringify(await assignment(admin, group, topic)) !== JSON.stringify(members)) throw new Error(`run ${runName}: the group rebalanced during the timed run: no figure reported`);
  // Each partition is consumed by one member, so the member with the most of this run's events sets the pace.
  const endsAfter = await partitionEnds(admin, topic);
  const eventsOf = (partitions: number[]) => partitions.reduce((sum, p) => sum + (endsAfter.get(p) ?? 0) - (endsBefore.get(p) ?? 0), 0);
  const eventsPerWorker = members.map(eventsOf).sort((a, b) => b - a);
  return {
    workers: live.length,
    events: EVENTS,
    partitionsPerWorker: members.map((m) => m.length).sort((a, b) => b - a),
    eventsPerWorker,
    speedupBoundByPlacement: +(EVENTS / eventsPerWorker[0]!).toFixed(2),
    // From the first send to every event credited and its offset committed: what the group sustains.
    seconds: +seconds.toFixed(2),
    eventsPerSecond: Math.round(EVENTS / seconds),
    firstToLastCreditSeconds: +(rows[0]!.span_ms / 1000).toFixed(2),
    balancesExact: true,
    perWorker: uses,
    cpu: usage,
    cpuMicrosPerEvent: microsPerEvent(usage.cpuSeconds, EVENTS, 1),
    loadAverageBefore: loadBefore,
    loadAverageAfter: loadAverage(),
  };
}

async function main() {
  const controller = cpuControllerOrExit('consumer scaling benchmark', 'consumer workers');
  const loadAtStart = loadAverage();
  const startedAt = Date.now();
  console.log(`consumer scaling benchmark: each consumer worker capped to ${CAP} CPU (cgroup v${controller.version}, ${controller.dir}); ${PARTITIONS} partitions, ${EVENTS} events per run, order ${ORDER.join(' ')}; load average ${loadAtStart.join(' ')} on ${os.cpus().length} cores${quick ? ' (quick)' : ''}`);
  const db = await createTestDatabase({ serverUrl: config.database.url, prefix: 'bench_consumer_scaling' });
  const { topic } = await createTestTopic(PARTITIONS, { prefix: 'bench-consumer-scaling', kafka });
  const group = uniqueName('bench-consumer-scaling');
  const env = consumerEnv({ databaseUrl: db.url, topic, group, taskQueue: uniqueName('bench-consumer-scaling-tq'), partitions: PARTITIONS });
  const admin = kafka.admin();
  const workers = new CappedWorkerSet(controller, CAP, {
    name: 'consumer',
    spawn: () => spawnConsumer(env),
    pid: (p) => p.proc.pid!,
    waitUntilRunning,
    stop: (p) => p.stop(),
    kill: (p) => p.stop('SIGKILL'),
  });
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    await workers.killAll();
    await admin.disconnect().catch(() => undefined);
    await deleteTopics([topic, `${topic}.dlq`], kafka).catch(() => undefined);
    await db.drop().catch(() => undefined);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n${signal}: stopping the workers and removing their cgroups`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);
  try {
    await admin.connect();
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
    const runs = [];
    for (const [i, n] of ORDER.entries()) {
      await workers.resize(n);
      const settled = Date.now();
      await eventually(
        `the group to settle on ${n} member(s) holding every partition`,
        async () => {
          const members = await assignment(admin, group, topic);
          return members.length === n && members.every((m) => m.length > 0) && members.flat().length === PARTITIONS;
        },
        120_000,
        250,
      );
      const spreadSeconds = +((Date.now() - settled) / 1000).toFixed(1);
      // Through the group as it now stands, so that a worker that just joined has its code warm.
      await creditThrough(topic, group, `warm${i + 1}`, WARMUP_EVENTS);
      const run = { ...(await timedRun({ db, admin, topic, group, live: workers.live }, `run${i + 1}`)), spreadSeconds };
      runs.push(run);
      console.log(
        `${n} capped worker(s), partitions ${run.partitionsPerWorker.join('/')} (spread in ${spreadSeconds} s), events per worker ${run.eventsPerWorker.join('/')} (placement allows ${run.speedupBoundByPlacement}×): ${run.eventsPerSecond} credits/s (${EVENTS} sent, credited and committed in ${run.seconds} s); ` +
          `worker CPU per wall second ${run.perWorker.map((w) => w.cpuPerWallSecond).join(', ')} (cap ${CAP}), throttled in ${run.perWorker.map((w) => `${Math.round(w.throttledShare * 100)} %`).join(', ')} of periods; ` +
          `${run.cpu.coresBusy} of ${run.cpu.cores} cores busy; load ${run.loadAverageAfter[0]}`,
      );
    }
    const summary = summarizeCappedRuns(runs, CAP);
    const model = modelFromRuns(runs, { label: 'consumer worker', maxCores: PARTITIONS, unit: 'partitions' }, [2, 4, 8, 16], BRIEF_CREDITS_PER_SECOND);
    const loadAtEnd = loadAverage();
    printCappedSummary(summary, 'credit');
    console.log(`model, one machine: ${model.oneMachine.map((p) => `${p.cores} cores → ${p.eventsPerSecond}/s (${p.limitedBy})`).join('; ')}`);
    console.log(`model, consumer workers elsewhere: ${model.workersElsewhere.map((p) => `${p.cores} cores → ${p.eventsPerSecond}/s (${p.limitedBy})`).join('; ')}`);
    console.log(`model, ${BRIEF_CREDITS_PER_SECOND} credits/s takes: ${JSON.stringify(model.target)}`);
    console.log(`load average: ${loadAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end; ${((Date.now() - startedAt) / 60_000).toFixed(1)} min`);
    const written = await saveBenchmark({
      // A quick run started by hand must not overwrite the committed full-size result.
      name: quick && !process.env.BENCH_RESULTS_DIR ? 'consumer-scaling-quick' : 'consumer-scaling',
      command: 'npm run bench:consumer-scaling',
      settings: {
        partitions: PARTITIONS,
        accounts: ACCOUNTS,
        consumerBatchSize: config.consumer.batchSize,
        events: EVENTS,
        warmupEvents: WARMUP_EVENTS,
        repeats: REPEATS,
        order: ORDER,
        cap: { cpus: CAP, mechanism: `cgroup v${controller.version}`, hierarchy: controller.dir },
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        minutes: +((Date.now() - startedAt) / 60_000).toFixed(1),
        note: 'each consumer worker in its own cgroup with the same CPU quota; PostgreSQL, Kafka and the Temporal dev server uncapped on the same 2 cores; the kafka CPU includes receiving the events from the benchmark’s producer',
      },
      results: { summary, model, runs },
      chart: cappedCurveChart({
        title: `Credits through the inbox by capped consumer workers (${CAP} CPU each; ${PARTITIONS} partitions, ${EVENTS} events per run)`,
        runs,
        summary,
        workersTitle: 'consumer worker processes (each capped)',
        rateTitle: 'credits/s (first send → every credit committed)',
        placementLabel: 'what the partitions’ assignment allows',
      }),
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    await cleanUp();
  }
}

runBenchmark(main);

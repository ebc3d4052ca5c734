import '../local-stack/apply-stack-env';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { Kafka, logLevel } from 'kafkajs';
import { loadStackConfig } from '../local-stack/stack-config';
import { RELAY_SHARD_WORKFLOW, RELAY_WORKFLOW_TASK_TIMEOUT, type RelayShardWorkflow } from '../../workflows/relay/contract';
import { createTestTopic, deleteTopics } from '../../test/kit/kafka';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';
import { uniqueName } from '../../test/kit/ids';
import { RelayWorkerProcess } from '../../test/kit/relay-worker-process';
import { assertCapHeld, cappedCurveChart, CappedWorkerSet, cpuControllerOrExit, interleavedOrder, loadAverage, meterCapUse, printCappedSummary, summarizeCappedRuns, type CapUse } from './support/capped-scaling';
import { processCpuSeconds } from './support/cpu-cap';
import { childPidByTitle, measureCpu, microsPerEvent, postmasterPidOf } from './support/cpu-usage';
import { eventsPerShardSince, insertBacklog, maxOutboxId, waitDrained } from './support/outbox-backlog';
import { saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';
import { modelFromRuns } from './support/scaling-model';
import { waitSpread, workerPidByShard } from './support/shard-spread';

// Relay scale-out where the worker is the bottleneck (issue 13, point 3). Every relay worker
// process runs in a cgroup of its own capped to the same CPU share, so 1, 2 and 3 workers can be
// compared fairly on a machine whose two cores PostgreSQL, Kafka and Temporal also need: uncapped,
// a second worker only competes with PostgreSQL for the same cores (bench:relay-scale).
// At the default settings (relay sessions, RELAY_SHARDS, RELAY_BATCH_SIZE), one set of shards
// throughout; worker counts interleaved 1, 2, 3, 3, 2, 1, 1, 2, 3 (workers added, or stopped with
// SIGTERM, with no configuration change). Before each timed run it waits until the shards' own
// status names exactly the live workers, then warms up, then times a backlog committed in
// 10,000-row transactions → Kafka ack (acks=all) → marked, drained. In the same runs: CPU per
// event per component (/proc), and each worker's CPU per wall second against its cap (the proof
// the cap applied) with its cgroup's throttling counters (the proof the worker was the bottleneck).
// Run: npm run bench:scaling   (about 12 minutes; BENCH_QUICK=1: 20,000 events, one repeat, ~2 min)
//
// The cap: 0.2 CPU per worker by default (BENCH_CPU_CAP). Uncapped, the relay spends ≈ 50 µs of
// worker CPU and ≈ 65 µs of PostgreSQL CPU per event, ≈ 30 µs more in Kafka and Temporal
// (tools/bench/results/relay-scale.json). With 3 workers at 0.2 CPU (0.6 CPU, ≈ 7,000–10,000 events/s
// with 8 shards split 3/3/2) the services need about one core, which leaves headroom on two for
// the benchmark's own inserts and the machine's other work (measured: 1.05–1.55 of the 2 cores busy
// in the 3-worker runs, other sessions' work included; docs/scaling.md). At 0.25 the 3-worker step
// would need most of both cores and PostgreSQL would be the bottleneck again; below 0.15 a
// 1-worker run of 200,000 events takes minutes.

const quick = process.env.BENCH_QUICK === '1';
const config = loadStackConfig();
const EVENTS = Number(process.env.BENCH_EVENTS ?? (quick ? 20_000 : 200_000));
const WARMUP_EVENTS = quick ? 4_000 : 20_000;
const REPEATS = Number(process.env.BENCH_REPEATS ?? (quick ? 1 : 3));
const CAP = Number(process.env.BENCH_CPU_CAP ?? 0.2);
const SHARDS = config.relay.shards;
const BATCH = config.relay.batchSize;
const kafka = new Kafka({ clientId: `scaling-bench-${process.pid}`, brokers: config.kafka.brokers, logLevel: logLevel.NOTHING });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ORDER = interleavedOrder(REPEATS);

type CappedWorker = CappedWorkerSet<RelayWorkerProcess>['live'][number];

interface WorkerShare extends CapUse {
  shards: number;
  /** This run's rows on its shards. */
  events: number;
}

async function timedRun(db: TestDatabase, client: Client, ids: string[], live: CappedWorker[], postmasterPid: number | undefined, walWriterPid: number | undefined) {
  await waitDrained(db, 300_000, 'before run');
  await sleep(500);
  // Where each shard runs as the timing starts, and the last id before this run's rows.
  const placement = await workerPidByShard(client, ids);
  const firstId = await maxOutboxId(db);
  const loadBefore = loadAverage();
  const pids = live.map((w) => w.pid);
  const cpu = measureCpu(() => pids, { postmasterPid, databaseName: db.name });
  const capUse = meterCapUse(live);
  const walBefore = walWriterPid === undefined ? undefined : processCpuSeconds(walWriterPid);
  const t0 = Date.now();
  await insertBacklog(db, EVENTS);
  await waitDrained(db, 900_000, 'backlog');
  const seconds = (Date.now() - t0) / 1000;
  // Read at once, before the queries below: the status queries run on the workers and would add
  // CPU outside the timed window.
  const usage = cpu.stop();
  const uses = capUse.stop(seconds);
  const walAfter = walWriterPid === undefined ? undefined : processCpuSeconds(walWriterPid);
  const placementAfter = await workerPidByShard(client, ids);
  const eventsPerShard = await eventsPerShardSince(db, SHARDS, firstId);
  const eventsOf = (pid: number) => eventsPerShard.reduce((sum, n, shard) => sum + (placement[shard] === pid ? n : 0), 0);
  const workers: WorkerShare[] = uses.map((u) => ({ ...u, shards: placement.filter((p) => p === u.pid).length, events: eventsOf(u.pid) }));
  assertCapHeld(uses, CAP);
  const cpuMicrosPerEvent = microsPerEvent(usage.cpuSeconds, EVENTS, 1);
  if (walBefore !== undefined && walAfter !== undefined) cpuMicrosPerEvent['postgres walwriter'] = +(((walAfter - walBefore) / EVENTS) * 1e6).toFixed(2);
  // Each shard relays only its own keys' rows, so the worker with the most of them sets the pace:
  // n workers can be at most (all rows / its rows) times as fast as one.
  const speedupBoundByPlacement = +(EVENTS / Math.max(...workers.map((w) => w.events))).toFixed(2);
  return {
    workers: live.length,
    events: EVENTS,
    seconds: +seconds.toFixed(2),
    eventsPerSecond: Math.round(EVENTS / seconds),
    eventsPerShard,
    placementHeldThroughout: placement.every((pid, shard) => placementAfter[shard] === pid),
    speedupBoundByPlacement,
    perWorker: workers,
    cpu: usage,
    cpuMicrosPerEvent,
    loadAverageBefore: loadBefore,
    loadAverageAfter: loadAverage(),
  };
}

type Run = Awaited<ReturnType<typeof timedRun>> & { spreadSeconds: number; shardsPerWorker: number[] };

async function main() {
  const controller = cpuControllerOrExit('scaling benchmark', 'relay workers');
  const loadAtStart = loadAverage();
  const startedAt = Date.now();
  console.log(`relay scaling benchmark: each relay worker capped to ${CAP} CPU (cgroup v${controller.version}, ${controller.dir}); ${SHARDS} shards, batch ${BATCH}, ${EVENTS} events per run, order ${ORDER.join(' ')}; load average ${loadAtStart.join(' ')} on ${os.cpus().length} cores${quick ? ' (quick)' : ''}`);

  const db = await createTestDatabase({ serverUrl: config.database.url, prefix: 'bench_scaling' });
  const topic = (await createTestTopic(6, { prefix: 'bench-scaling', kafka })).topic;
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const taskQueue = uniqueName('bench-scaling-tq');
  const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue };
  const ids = Array.from({ length: SHARDS }, (_, i) => uniqueName(`bench-scaling-shard-${i}`));
  const workers = new CappedWorkerSet(controller, CAP, {
    name: 'relay',
    spawn: () => new RelayWorkerProcess(env),
    pid: (p) => p.child.pid!,
    waitUntilRunning: (p) => p.waitUntilRunning(),
    stop: (p) => p.stop(),
    kill: (p) => p.kill9(),
  });
  const live = workers.live;
  let cleaned = false;
  const cleanUp = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const id of ids) await client.workflow.getHandle(id).terminate('benchmark over').catch(() => undefined);
    await workers.killAll();
    await connection.close().catch(() => undefined);
    await deleteTopics([topic], kafka).catch(() => undefined);
    await db.drop().catch(() => undefined);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n${signal}: stopping the workers and removing their cgroups`);
    void cleanUp().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);

  try {
    const postmasterPid = await postmasterPidOf(db.pool);
    const walWriterPid = postmasterPid === undefined ? undefined : childPidByTitle(postmasterPid, 'postgres: walwriter');
    await workers.resize(1);
    for (let i = 0; i < SHARDS; i++) {
      await client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, { taskQueue, workflowId: ids[i]!, workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT, args: [{ shardIndex: i, shardCount: SHARDS, batchSize: BATCH }] });
    }
    const caps = { cpus: CAP, quotaAsSet: live[0]!.group.quotaAsSet(), mechanism: `cgroup v${controller.version}`, hierarchy: controller.dir };
    console.log(`cap as the kernel holds it: ${caps.quotaAsSet} (quota, period in µs)`);

    const runs: Run[] = [];
    for (const n of ORDER) {
      await workers.resize(n);
      const spread = await waitSpread(db, client, ids, live.map((w) => w.process));
      await insertBacklog(db, WARMUP_EVENTS);
      const run = { ...(await timedRun(db, client, ids, live, postmasterPid, walWriterPid)), spreadSeconds: spread.seconds, shardsPerWorker: spread.shardsPerWorker };
      runs.push(run);
      console.log(
        `${n} capped worker(s), shards ${spread.shardsPerWorker.join('/')} (spread in ${spread.seconds} s), events per worker ${run.perWorker.map((w) => w.events).join('/')} (placement allows ${run.speedupBoundByPlacement}×): ${run.eventsPerSecond} events/s (${EVENTS} in ${run.seconds} s); ` +
          `worker CPU per wall second ${run.perWorker.map((w) => w.cpuPerWallSecond).join(', ')} (cap ${CAP}), throttled in ${run.perWorker.map((w) => `${Math.round(w.throttledShare * 100)} %`).join(', ')} of periods; ` +
          `${run.cpu.coresBusy} of ${run.cpu.cores} cores busy; load ${run.loadAverageAfter[0]}`,
      );
    }

    const summary = { ...summarizeCappedRuns(runs, CAP), placementHeldInEveryRun: runs.every((r) => r.placementHeldThroughout) };
    const model = modelFromRuns(runs, { label: 'relay worker', maxCores: SHARDS, unit: 'shards' }, [2, 4, 8, 16]);
    const loadAtEnd = loadAverage();
    printCappedSummary(summary, 'event');
    console.log(`model, one machine: ${model.oneMachine.map((p) => `${p.cores} cores → ${p.eventsPerSecond}/s (${p.limitedBy})`).join('; ')}`);
    console.log(`model, relay workers elsewhere: ${model.workersElsewhere.map((p) => `${p.cores} cores → ${p.eventsPerSecond}/s (${p.limitedBy})`).join('; ')}`);
    console.log(`load average: ${loadAtStart.join(' ')} at start, ${loadAtEnd.join(' ')} at end; ${((Date.now() - startedAt) / 60_000).toFixed(1)} min`);

    const written = await saveBenchmark({
      // The suite's quick mode writes into a folder of its own (BENCH_RESULTS_DIR) under the suite's name; a
      // quick run started by hand must not overwrite the committed full-size result.
      name: quick && !process.env.BENCH_RESULTS_DIR ? 'scaling-quick' : 'scaling',
      command: 'npm run bench:scaling',
      settings: {
        shards: SHARDS,
        batchSize: BATCH,
        events: EVENTS,
        warmupEvents: WARMUP_EVENTS,
        repeats: REPEATS,
        order: ORDER,
        cap: caps,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        minutes: +((Date.now() - startedAt) / 60_000).toFixed(1),
        note: 'each relay worker in its own cgroup with the same CPU quota; PostgreSQL, Kafka and the Temporal dev server uncapped on the same 2 cores; the postgres CPU includes the benchmark inserting the backlog',
      },
      results: { summary, model, runs },
      chart: cappedCurveChart({
        title: `Relay throughput by capped worker processes (${CAP} CPU each; ${SHARDS} shards, batch ${BATCH}, ${EVENTS} events per run)`,
        runs,
        summary,
        workersTitle: 'relay worker processes (each capped)',
        rateTitle: 'events/s (commit → Kafka ack → marked)',
        placementLabel: 'what the shards’ placement allows',
      }),
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    await cleanUp();
  }
}

runBenchmark(main);

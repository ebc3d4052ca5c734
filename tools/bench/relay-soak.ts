import '../local-stack/apply-stack-env';
import fs from 'node:fs';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { Kafka, logLevel } from 'kafkajs';
import { loadStackConfig } from '../local-stack/stack-config';
import { createTestTopic, deleteTopics } from '../../test/kit/kafka';
import { insertBacklog, waitDrained } from './support/outbox-backlog';
import { Relays } from './support/relay-shards';
import type { RelayActivityMode } from '../../workflows/relay/contract';
import { RelayWorkerProcess, type WorkerMemoryLog } from '../../test/kit/relay-worker-process';
import { commandLine, saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';
import { uniqueName } from '../../test/kit/ids';
import { createTestDatabase } from '../../test/kit/database';

// Relay soak: does one relay worker's memory level off, or grow for as long as it runs? The
// relay is meant to run forever, so this runs it as production does — one worker process with
// the default settings (batch 2000, 2 shards, local activities; BENCH_SHARDS and
// BENCH_ACTIVITY_MODE change the last two), shards started once and never restarted — through BENCH_CYCLES cycles of: commit a backlog of BENCH_EVENTS rows, wait until
// it is drained, let the worker settle, sample its resident memory (VmRSS) and the main
// thread's V8 heap and external memory (the worker logs them: RELAY_MEMORY_LOG_MS). Published
// rows are deleted between cycles, as retention would, so the database stays the same size.
// Also per cycle: the peak RSS while draining (VmHWM, reset before each cycle) and each shard's
// continue-as-new count, since a new run starts with an empty history and workflow state.
// Run: npm run bench:relay-soak   (30 cycles: about 7 minutes on a shared 2-core machine)
// For diagnosis: BENCH_WORKER_NODE_ARGS adds Node flags to the worker (e.g. --trace-gc, whose
// lines name each isolate, so the workflow thread's heap shows beside the main thread's), and
// BENCH_WORKER_LOG copies the worker's stdout to that file. BENCH_RESTART_SHARDS=stop (or
// =terminate) starts new shards every cycle and ends them after it with the stop signal (or by
// terminating them), as `npm run bench:relay` does between its runs.

const CYCLES = Number(process.env.BENCH_CYCLES ?? 30);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 100_000);
const SETTLE_MS = 2_000;
const MEMORY_LOG_MS = 500;
const BATCH_SIZE = 2000;
// BENCH_SHARDS=8 BENCH_ACTIVITY_MODE=session: bench:relay's setting instead of production's
// smallest, to see what its starts and stops of shards leave behind in the worker.
const SHARDS = Number(process.env.BENCH_SHARDS ?? 2);
const ACTIVITY_MODE = (process.env.BENCH_ACTIVITY_MODE ?? 'local') as RelayActivityMode;
if (ACTIVITY_MODE !== 'local' && ACTIVITY_MODE !== 'session') throw new Error('BENCH_ACTIVITY_MODE must be local or session');
const extraNodeArgs = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
const workerLogPath = process.env.BENCH_WORKER_LOG;
const restartShards = process.env.BENCH_RESTART_SHARDS as 'stop' | 'terminate' | undefined;
if (restartShards !== undefined && restartShards !== 'stop' && restartShards !== 'terminate') throw new Error('BENCH_RESTART_SHARDS must be stop or terminate');
// Diagnostic runs save under another name so they never replace the production-settings figures.
const resultName = process.env.BENCH_RESULT_NAME ?? 'relay-soak';
const config = loadStackConfig();
const kafka = new Kafka({ clientId: `relay-soak-${process.pid}`, brokers: config.kafka.brokers, logLevel: logLevel.NOTHING });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface CycleSample {
  cycle: number;
  drainSeconds: number;
  eventsPerSecond: number;
  rssMiB?: number;
  peakRssMiB?: number;
  /** The worker's own last memory log line: its main thread's V8 heap and external memory. */
  mainThread?: WorkerMemoryLog;
  /** Continue-as-new count per shard so far. */
  runsPerShard: number[];
  batchesThisRunPerShard: number[];
}

function describe(s: CycleSample): string {
  const m = s.mainThread;
  const heap = m ? `main heap ${m.heapUsedMiB}/${m.heapTotalMiB} MiB, external ${m.externalMiB} MiB (array buffers ${m.arrayBuffersMiB})` : 'no memory log';
  return (
    `cycle ${String(s.cycle).padStart(3)}: RSS ${s.rssMiB} MiB (peak while draining ${s.peakRssMiB}); ${heap}; ` +
    `${s.eventsPerSecond} events/s; continue-as-new per shard ${s.runsPerShard.join('/')}, batches this run ${s.batchesThisRunPerShard.join('/')}`
  );
}

async function main() {
  const startedAt = Date.now();
  const loadAtStart = os.loadavg().map((l) => +l.toFixed(2));
  console.log(`relay soak: ${CYCLES} cycles of ${EVENTS} events, batch ${BATCH_SIZE}, ${SHARDS} shards, ${ACTIVITY_MODE === 'local' ? 'local activities' : 'relay sessions'}; load ${loadAtStart.join(' ')}`);
  const db = await createTestDatabase({ serverUrl: config.database.url, prefix: 'bench_relay_soak' });
  const topic = (await createTestTopic(6, { prefix: 'bench-relay-soak', logAppendTime: true, kafka })).topic;
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const taskQueue = uniqueName('bench-relay-soak-tq');
  const worker = new RelayWorkerProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue, RELAY_MEMORY_LOG_MS: String(MEMORY_LOG_MS) }, extraNodeArgs);
  if (workerLogPath) worker.child.stdout!.pipe(fs.createWriteStream(workerLogPath));
  const relays = new Relays(client, taskQueue);
  const startShards = () => relays.start({ shards: SHARDS, batchSize: BATCH_SIZE, mode: ACTIVITY_MODE });
  const samples: CycleSample[] = [];
  try {
    await worker.waitUntilRunning();
    console.log(`worker pid ${worker.child.pid}${extraNodeArgs.length ? ` (extra node args: ${extraNodeArgs.join(' ')})` : ''}; RSS at start ${worker.rssMiB()} MiB`);
    if (!restartShards) await startShards();
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      if (restartShards) await startShards();
      worker.resetPeakRss();
      const t0 = Date.now();
      await insertBacklog(db, EVENTS);
      await waitDrained(db, 300_000, `cycle ${cycle}`);
      const drainSeconds = (Date.now() - t0) / 1000;
      const peakRssMiB = worker.peakRssMiB();
      await db.pool.query(`DELETE FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL`);
      await sleep(SETTLE_MS);
      const statuses = await relays.statuses();
      if (restartShards) {
        await relays.waitIdle();
        await (restartShards === 'stop' ? relays.stop() : relays.terminate());
      }
      const sample: CycleSample = {
        cycle,
        drainSeconds: +drainSeconds.toFixed(2),
        eventsPerSecond: Math.round(EVENTS / drainSeconds),
        rssMiB: worker.rssMiB(),
        peakRssMiB,
        mainThread: worker.lastMemoryLog,
        runsPerShard: statuses.map((s) => s.runs),
        batchesThisRunPerShard: statuses.map((s) => s.batchesThisRun),
      };
      samples.push(sample);
      console.log(describe(sample));
    }
    const loadAtEnd = os.loadavg().map((l) => +l.toFixed(2));
    const minutes = +((Date.now() - startedAt) / 60_000).toFixed(1);
    console.log(`done in ${minutes} min; load ${loadAtEnd.join(' ')}`);
    const written = await saveBenchmark({
      name: resultName,
      command: commandLine('bench:relay-soak'),
      settings: {
        cycles: CYCLES,
        eventsPerCycle: EVENTS,
        batchSize: BATCH_SIZE,
        shards: SHARDS,
        activityMode: ACTIVITY_MODE,
        shardsRestartedEveryCycle: restartShards ?? 'no',
        settleMs: SETTLE_MS,
        workerNodeArgs: extraNodeArgs,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        minutes,
        note: 'RSS sampled after each drained cycle plus a settle pause; the main-thread figures come from the worker’s own memory log (workers/memory-log.ts)',
      },
      results: { samples },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `Relay worker memory over ${CYCLES} cycles of ${EVENTS.toLocaleString('en')} events (one worker, shards ${restartShards ? `started every cycle, ended by ${restartShards}` : 'never restarted'})`,
        data: {
          values: samples.flatMap((s) => [
            { cycle: s.cycle, series: 'RSS after drain', MiB: s.rssMiB },
            { cycle: s.cycle, series: 'peak RSS while draining', MiB: s.peakRssMiB },
            { cycle: s.cycle, series: 'main-thread V8 heap used', MiB: s.mainThread?.heapUsedMiB },
            { cycle: s.cycle, series: 'main-thread external', MiB: s.mainThread?.externalMiB },
          ]),
        },
        mark: { type: 'line', point: true },
        encoding: {
          x: { field: 'cycle', type: 'quantitative', title: 'cycle' },
          y: { field: 'MiB', type: 'quantitative', title: 'MiB' },
          color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 300 } },
        },
        width: 640,
        height: 320,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    await relays.stop();
    await worker.kill9();
    await connection.close();
    await deleteTopics([topic], kafka);
    await db.drop();
  }
}

runBenchmark(main);

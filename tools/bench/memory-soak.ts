import '../local-stack/apply-stack-env';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { startWorkerEntry, stopChildWorkers, type ChildWorker } from '../local-stack/child-processes';
import { waitForPollers } from '../local-stack/wait-for-workers';
import { PROJECT_ROOT } from '../../src/config/env';
import { loadStackConfig } from '../local-stack/stack-config';
import { createKafka } from '../../src/kafka/client';
import { startRelays } from '../../src/outbox/relay-control';
import { ensureRetentionSchedule } from '../../src/retention/schedule';
import { deleteTopics } from '../../test/kit/kafka';
import { createTestDatabase } from '../../test/kit/database';
import { workerEntry, type WorkerEntry, type WorkerName } from '../../workers/entries';
import { commandLine, saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';
import { procStatusKiB, summariseRss, type RssSample } from '../../test/kit/process-memory';
import { exampleConsumerEntry } from '../../examples/payments/worker-entries';
import { compiledScript } from '../../test/kit/compiled-build';

// Memory soak: do the three production workers (relay, consumer, retention) stay within the
// BRIEF's 250 MB RSS each under full load, for BENCH_MINUTES (30) at the default settings?
// Each worker runs as its own process with the flags, environment and settings every worker
// gets (workers/node-args.ts, src/config/env.ts defaults). The load is closed-loop, as fast as the
// pipeline drains it: a producer commits outbox rows (2,000 per transaction, one account credit
// of 1 each) whenever fewer than BENCH_IN_FLIGHT (40,000) committed events are not yet credited,
// so the relay and the consumer never run dry and the backlog never grows without bound. The
// retention schedule runs every minute with a one-minute window (the defaults are 10 minutes
// and a day: too rare to matter in 30 minutes), so the retention worker deletes published rows
// throughout. Every BENCH_SAMPLE_MS (5 s) each worker's VmRSS and VmHWM (/proc/PID/status) are
// sampled. At the end the producer stops, the pipeline drains, and the run proves it worked:
// events committed = inbox rows = sum of the balances (each applied once), and every event on the
// topic at least once. The relay publishes at least once, not exactly once: a batch Kafka
// acknowledged whose mark then failed goes out again (docs/relay.md, "At least once"), and the
// inbox absorbs the copy. Copies on the topic are counted and reported (duplicatesOnTopic), not
// failed.
//   npm run bench:memory-soak           (30 minutes; BENCH_MINUTES=2 for a quick look)
// The workers run as the installed package runs them: compiled JavaScript, built first with
// `npm run build` (dist/workers/*.worker.js, docs/adopting.md). BENCH_WORKERS_FROM=source runs the
// TypeScript through tsx instead, as `npm start` does: its require hook and the source maps it
// keeps cost each worker memory of its own (docs/measurements/relay-log.md, "Memory of the three
// workers").
// For diagnosis: BENCH_<RELAY|CONSUMER|RETENTION>_NODE_ARGS adds Node flags to that worker, and
// BENCH_RESULT_NAME saves under another name so a diagnostic run never replaces the real figures.

const MINUTES = Number(process.env.BENCH_MINUTES ?? 30);
const SAMPLE_MS = Number(process.env.BENCH_SAMPLE_MS ?? 5_000);
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 40_000);
const PER_TRANSACTION = 2_000;
const ACCOUNTS = 1_000;
const DRAIN_TIMEOUT_MS = 10 * 60_000;
const resultName = process.env.BENCH_RESULT_NAME ?? 'memory-soak';
const WORKERS: WorkerName[] = ['relay', 'consumer', 'retention'];
const FROM_SOURCE = process.env.BENCH_WORKERS_FROM === 'source';
const extraNodeArgs = (w: WorkerName) => (process.env[`BENCH_${w.toUpperCase()}_NODE_ARGS`] ?? '').split(' ').filter(Boolean);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MB = (kib: number) => +((kib * 1024) / 1e6).toFixed(1);
const MiB = (kib: number) => +(kib / 1024).toFixed(1);

/**
 * The entries a supervisor gets from `workerEntry`: this checkout's TypeScript (through tsx) with
 * BENCH_WORKERS_FROM=source, else the compiled package's, built first (`npm run build`) and asked
 * through its own dist/workers/entries.js, exactly as a package user's supervisor would.
 */
async function workerEntries(): Promise<(w: WorkerName, file?: string) => WorkerEntry> {
  if (FROM_SOURCE) return workerEntry;
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: PROJECT_ROOT, stdio: 'inherit' });
  const compiled = (await import(path.join(PROJECT_ROOT, 'dist', 'workers', 'entries.js'))) as typeof import('../../workers/entries');
  return compiled.workerEntry;
}

/**
 * The consumer runs the example's handlers, so its entry is the example's file. Compiled too unless
 * BENCH_WORKERS_FROM=source, as a service compiles its own entry: run through tsx it carried tsx's
 * loader and source maps, memory the relay and retention workers did not (about 30 MB levelled:
 * docs/measurements/relay-log.md, s42).
 */
function consumerEntry(entryOf: (w: WorkerName, file?: string) => WorkerEntry): WorkerEntry {
  return FROM_SOURCE ? exampleConsumerEntry() : entryOf('consumer', compiledScript('examples/payments/consumer-worker.ts'));
}

async function main() {
  const base = loadStackConfig();
  const loadAtStart = os.loadavg().map((l) => +l.toFixed(2));
  const db = await createTestDatabase({ serverUrl: base.database.url, prefix: 'bench_memory_soak' });
  const suffix = crypto.randomBytes(3).toString('hex');
  const topic = `bench-memory-soak-${suffix}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    DATABASE_URL: db.url,
    KAFKA_TOPIC: topic,
    KAFKA_DEAD_LETTER_TOPIC: `${topic}.dlq`,
    CONSUMER_GROUP: `bench-memory-soak-${suffix}`,
    RELAY_TASK_QUEUE: `bench-memory-soak-relay-${suffix}`,
    CONSUMER_TASK_QUEUE: `bench-memory-soak-credit-${suffix}`,
    RETENTION_TASK_QUEUE: `bench-memory-soak-retention-${suffix}`,
    RETENTION_SCHEDULE_ID: `bench-memory-soak-retention-${suffix}`,
    RELAY_WORKFLOW_ID_PREFIX: `bench-memory-soak-relay-${suffix}`,
    RETENTION_INTERVAL: '1m',
    RETENTION_WINDOW_MS: '60000',
    LOG_LEVEL: 'warn',
    // Compiled workers live under dist/, whose parent is not the project: the local stack's cache
    // (its generated PostgreSQL logins) is named explicitly.
    OUTBOX_CACHE_DIR: base.local.cacheDir,
  };
  const config = loadStackConfig(env);
  await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
  const logDir = path.join(config.local.cacheDir, 'logs', `bench-memory-soak-${suffix}`);
  const entryOf = await workerEntries();
  // The consumer is the example's (the package ships no consumer process: the handlers are a service's).
  const entries = Object.fromEntries(WORKERS.map((w) => [w, w === 'consumer' ? consumerEntry(entryOf) : entryOf(w)])) as Record<WorkerName, WorkerEntry>;
  const workers = WORKERS.map((w) => ({ name: w, child: startWorkerEntry(`${w}-worker`, entries[w], logDir, env, extraNodeArgs(w)) }));
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const kafka = createKafka(config, `bench-memory-soak-${process.pid}`);
  const samples: RssSample[] = [];
  const throughput: { minute: number; creditedPerSecond: number }[] = [];
  let committed = 0;
  const credited = async () => Number((await db.pool.query<{ total: string | null }>('SELECT sum(balance)::bigint AS total FROM accounts')).rows[0]!.total ?? 0);
  const sampleAll = (t0: number) => {
    for (const w of workers) {
      const status = procStatusKiB(w.child.process.pid!);
      if (status) samples.push({ worker: w.name, seconds: Math.round((Date.now() - t0) / 1000), rssKiB: status.VmRSS, hwmKiB: status.VmHWM });
    }
  };
  const alive = (all: { name: WorkerName; child: ChildWorker }[]) => {
    for (const w of all) if (w.child.process.exitCode !== null || w.child.process.signalCode !== null) throw new Error(`${w.name} worker exited (${w.child.process.exitCode ?? w.child.process.signalCode}): see ${w.child.logFile}`);
  };
  try {
    await waitForPollers(client, [config.relay.taskQueue!, config.consumer.taskQueue!, config.retention.taskQueue], 180_000);
    await startRelays({ client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: config.relay.batchSize, workflowId: config.relay.workflowId }, config.relay.shards);
    await ensureRetentionSchedule(client, config);
    console.log(
      `memory soak: ${MINUTES} min, relay ${config.relay.shards} shards × batch ${config.relay.batchSize}, consumer batch ${config.consumer.batchSize}, ` +
        `closed loop ≤ ${IN_FLIGHT} events in flight, retention every ${config.retention.interval}; pids ${workers.map((w) => `${w.name} ${w.child.process.pid}`).join(', ')}; load ${loadAtStart.join(' ')}`,
    );
    const t0 = Date.now();
    const end = t0 + MINUTES * 60_000;
    let nextSample = t0;
    let nextReport = t0 + 60_000;
    let creditedAtLastReport = 0;
    let lastReportAt = t0;
    while (Date.now() < end) {
      if (Date.now() >= nextSample) {
        alive(workers);
        sampleAll(t0);
        nextSample += SAMPLE_MS;
      }
      const done = await credited();
      if (Date.now() >= nextReport) {
        const rate = Math.round((done - creditedAtLastReport) / ((Date.now() - lastReportAt) / 1000));
        throughput.push({ minute: Math.round((Date.now() - t0) / 60_000), creditedPerSecond: rate });
        const latest = WORKERS.map((w) => samples.filter((s) => s.worker === w).at(-1)).map((s) => `${s?.worker} ${s ? MB(s.rssKiB) : '?'} MB`);
        console.log(`${((Date.now() - t0) / 60_000).toFixed(0)} min: ${done.toLocaleString('en')} credited (${rate.toLocaleString('en')}/s this minute); RSS ${latest.join(', ')}; load ${os.loadavg()[0]!.toFixed(2)}`);
        creditedAtLastReport = done;
        lastReportAt = Date.now();
        nextReport += 60_000;
      }
      if (committed - done < IN_FLIGHT) {
        await db.pool.query(
          `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
           SELECT 'payment_confirmed', jsonb_build_object('event_id', $1::text || '-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % $4::int, 'amount', 1)
             FROM generate_series($2::int, $3::int) g`,
          [suffix, committed + 1, committed + PER_TRANSACTION, ACCOUNTS],
        );
        committed += PER_TRANSACTION;
      } else {
        await sleep(20);
      }
    }
    const loadAtEnd = os.loadavg().map((l) => +l.toFixed(2));
    const loadedSeconds = (Date.now() - t0) / 1000;
    const creditedUnderLoad = await credited();
    console.log(`producer stopped after ${committed.toLocaleString('en')} events; draining`);
    const drainDeadline = Date.now() + DRAIN_TIMEOUT_MS;
    while ((await credited()) < committed) {
      if (Date.now() > drainDeadline) throw new Error(`not drained in ${DRAIN_TIMEOUT_MS / 1000} s: ${await credited()} of ${committed} credited`);
      if (Date.now() >= nextSample) {
        sampleAll(t0);
        nextSample += SAMPLE_MS;
      }
      await sleep(250);
    }
    sampleAll(t0);
    alive(workers);

    // The pipeline worked: every committed event is on the topic, in the inbox and in a balance, once.
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchTopicOffsets(topic);
    await admin.disconnect();
    const onTopic = offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
    const inboxRows = Number((await db.pool.query<{ n: string }>('SELECT count(*) AS n FROM temporal_outbox.inbox_processed_events')).rows[0]!.n);
    const balances = await credited();
    const outbox = (await db.pool.query<{ pending: string; remaining: string }>(`SELECT count(*) FILTER (WHERE published_at IS NULL) AS pending, count(*) AS remaining FROM temporal_outbox.outbox_events`)).rows[0]!;
    const retentionRuns = (await client.schedule.getHandle(config.retention.scheduleId).describe()).info.numActionsTaken;
    const checks = {
      committed,
      messagesOnTopic: onTopic,
      duplicatesOnTopic: Math.max(0, onTopic - committed),
      inboxRows,
      creditedBySumOfBalances: balances,
      outboxPending: Number(outbox.pending),
      outboxRowsRemovedByRetention: committed - Number(outbox.remaining),
      retentionRuns,
    };
    // Applied exactly once and nothing missing from the topic; re-sent copies are the guarantee's (reported above).
    const exact = onTopic >= committed && inboxRows === committed && balances === committed && checks.outboxPending === 0;
    const perWorker = WORKERS.map((w) => summariseRss(w, samples.filter((s) => s.worker === w), MINUTES * 60));
    const summary = perWorker.map((p) => ({ ...p, peakMB: MB(p.peakKiB), peakMiB: MiB(p.peakKiB), levelledMB: MB(p.levelledKiB), levelledMiB: MiB(p.levelledKiB), lastThirdMB: p.lastThirdKiB.map(MB), firstThirdMB: p.firstThirdKiB.map(MB), withinTarget: MB(p.peakKiB) <= 250 }));
    for (const s of summary) {
      console.log(`${s.worker.padEnd(9)}: peak ${s.peakMB} MB (${s.peakMiB} MiB), levelled ${s.levelledMB} MB (${s.levelledMiB} MiB; last third ${s.lastThirdMB.join('–')} MB, first third ${s.firstThirdMB.join('–')} MB) → ${s.withinTarget ? 'within' : 'OVER'} 250 MB`);
    }
    const eventsPerSecond = Math.round(creditedUnderLoad / loadedSeconds);
    console.log(`events: ${JSON.stringify(checks)}; exact: ${exact}; ${eventsPerSecond.toLocaleString('en')} credited/s under load; load ${loadAtStart.join(' ')} → ${loadAtEnd.join(' ')}`);
    if (!exact) process.exitCode = 1;
    const written = await saveBenchmark({
      name: resultName,
      command: commandLine('bench:memory-soak'),
      settings: {
        minutes: MINUTES,
        sampleMs: SAMPLE_MS,
        load: `closed loop: ${PER_TRANSACTION.toLocaleString('en')}-event transactions whenever fewer than ${IN_FLIGHT.toLocaleString('en')} committed events are not yet credited (as fast as the pipeline drains)`,
        relayShards: config.relay.shards,
        relayBatchSize: config.relay.batchSize,
        consumerBatchSize: config.consumer.batchSize,
        kafkaPartitions: config.kafka.partitions,
        retention: { interval: config.retention.interval, windowMs: config.retention.windowMs, note: 'the defaults are 10m and 24 h; shortened so retention deletes throughout the run' },
        workers: FROM_SOURCE ? 'TypeScript sources through tsx (BENCH_WORKERS_FROM=source)' : 'compiled JavaScript, as the installed package runs them (npm run build, dist/workers); the consumer is the example’s entry, compiled by esbuild (test/kit/compiled-build.ts) as a service compiles its own',
        workerEntries: Object.fromEntries(WORKERS.map((w) => [w, path.relative(PROJECT_ROOT, entries[w].file)])),
        workerNodeArgs: Object.fromEntries(WORKERS.map((w) => [w, [...entries[w].nodeArgs, ...extraNodeArgs(w)]])),
        workerEnv: entries.consumer.env,
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        target: 'each worker ≤ 250 MB (10^6 bytes) RSS; MiB beside it',
        levelled: 'median of the VmRSS samples in the last third of the loaded period',
      },
      results: { summary, checks, exact, eventsPerSecondUnderLoad: eventsPerSecond, throughputPerMinute: throughput, samples },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `Worker RSS over a ${MINUTES}-minute soak at full load (${eventsPerSecond.toLocaleString('en')} events/s credited, ${committed.toLocaleString('en')} events)`,
        layer: [
          {
            data: { values: samples.map((s) => ({ minute: +(s.seconds / 60).toFixed(2), worker: `${s.worker} worker`, MB: MB(s.rssKiB) })) },
            mark: { type: 'line' },
            encoding: {
              x: { field: 'minute', type: 'quantitative', title: 'minutes' },
              y: { field: 'MB', type: 'quantitative', title: 'RSS (MB, 10^6 bytes)', scale: { domain: [0, 300] } },
              color: { field: 'worker', type: 'nominal', title: null },
            },
          },
          { data: { values: [{ MB: 250 }] }, mark: { type: 'rule', strokeDash: [6, 4], color: 'red' }, encoding: { y: { field: 'MB', type: 'quantitative' } } },
        ],
        width: 700,
        height: 320,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    await client.schedule.getHandle(config.retention.scheduleId).delete().catch(() => undefined);
    for (let i = 0; i < config.relay.shards; i++) await client.workflow.getHandle(config.relay.workflowId(i)).terminate('benchmark over').catch(() => undefined);
    await stopChildWorkers(workers.map((w) => w.child), 10_000);
    await connection.close();
    await deleteTopics([topic, `${topic}.dlq`], kafka);
    await db.drop();
  }
}

runBenchmark(main);

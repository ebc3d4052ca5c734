import '../local-stack/apply-stack-env';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { Pool } from 'pg';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../local-stack/child-processes';
import { EXAMPLE_KEY_FIELD, migrateExample } from '../../examples/migrate';
import { setUp } from '../../src/setup';
import { waitForPollers } from '../local-stack/wait-for-workers';
import { TASK_QUEUES } from '../../src/config/constants';
import { createPool } from '../../src/db/pool';
import { stackDown, stackUp } from '../local-stack/stack';
import { cachePaths } from '../local-stack/paths';
import { createKafka } from '../../src/kafka/client';
import { configuredRelayControl, startRelays } from '../../src/outbox/relay-control';
import { childEnv, isolatedStack } from '../../test/kit/isolated-stack';
import { AbsorbedDuplicates } from './absorbed-duplicates';
import { crashAndRestart, type CrashableService } from './service-crash';
import { startProducer } from './producers';
import { countTopicCopies, readLedger } from './tally';
import { compiledScript } from '../../test/kit/compiled-build';

export interface SoakOptions {
  /** Events written in all, half through `enqueue`, half as plain SQL. */
  events: number;
  /** kill -9 of a relay or consumer worker process (alternating). */
  workerKills: number;
  /** Crashes (kill -9 of the process group, then restart) of each of PostgreSQL, Kafka and Temporal. */
  serviceCrashes: number;
  /** Seconds between two faults. */
  faultEverySeconds: number;
  /** The whole run gives up (and reports what it has) after this long. */
  maxMinutes: number;
  log: (message: string) => void;
  /** Called with the soak's database after the tally, before the stack goes away (tests prove the tally can fail). */
  inspect?: (pool: Pool) => Promise<void>;
}

export interface SoakResult {
  events: { api: number; sql: number; total: number; failedTransactions: number };
  kills: { relay: number; consumer: number; total: number };
  crashes: Record<CrashableService, number>;
  duplicatesDelivered: number;
  duplicatesAbsorbed: number;
  lost: number;
  doubleApplied: number;
  parked: number;
  drained: boolean;
  seconds: number;
  timeline: { atSeconds: number; fault: string }[];
}

type WorkerKind = 'relay' | 'consumer';
const ENTRY: Record<WorkerKind, string> = { relay: 'workers/relay.worker.ts', consumer: 'examples/payments/consumer-worker.ts' };
const SERVICES: CrashableService[] = ['postgres', 'kafka', 'temporal'];
const ACCOUNTS = Array.from({ length: 50 }, (_, i) => 9000 + i);

/**
 * The fault soak (issue 11): a stack of its own (own ports and data, loopback only), a relay and
 * a consumer worker kept alive by a supervisor loop, two producers, and a schedule of faults
 * spread evenly over the run. At the end it waits for the pipeline to drain and counts, from the
 * database and the topic itself, what was lost and what was applied twice.
 */
export async function runFaultSoak(opts: SoakOptions): Promise<SoakResult> {
  const started = Date.now();
  const elapsed = () => Math.round((Date.now() - started) / 100) / 10;
  const deadline = started + opts.maxMinutes * 60_000;
  const stack = isolatedStack({ linkKafkaJars: true });
  const metricsPortBase = Number(stack.env.LOCAL_PG_PORT) + 5;
  const env = childEnv(stack, { METRICS_PORT_BASE: String(metricsPortBase), LOG_LEVEL: 'warn' });
  const { config } = stack;
  const paths = cachePaths(stack.dir);
  const logDir = path.join(stack.dir, 'logs', 'workers');
  const pool = createPool(config.database.url, { max: 4, connectionTimeoutMillis: 2000 });
  const workers = new Map<WorkerKind, ChildWorker>();
  const upSince = new Map<WorkerKind, number>();
  let supervising = true;
  const timeline: SoakResult['timeline'] = [];
  const kills = { relay: 0, consumer: 0 };
  const crashes: Record<CrashableService, number> = { postgres: 0, kafka: 0, temporal: 0 };

  /** Like a process supervisor: start the worker, and start it again whenever it exits. */
  const supervise = (kind: WorkerKind) => {
    // From one compiled build (test/kit/compiled-build.ts): a restart after each kill starts in about a second, not through tsx.
    const worker = startChildWorker(`${kind}-worker`, compiledScript(ENTRY[kind]), logDir, env);
    workers.set(kind, worker);
    upSince.set(kind, Date.now());
    worker.process.once('exit', () => {
      if (supervising) setTimeout(() => supervising && supervise(kind), 500);
    });
  };

  try {
    opts.log(`stack of its own in ${stack.dir}`);
    await stackUp(config, () => undefined);
    // As the example's service sets up (examples/setup-command.ts): its key field, then its tables.
    await setUp(config, { keyField: EXAMPLE_KEY_FIELD });
    await migrateExample(config.database.url);
    await pool.query('INSERT INTO accounts (account_id) SELECT unnest($1::bigint[])', [ACCOUNTS]);
    supervise('relay');
    supervise('consumer');
    const connection = await Connection.connect({ address: config.temporal.address });
    try {
      const client = new Client({ connection, namespace: config.temporal.namespace });
      await waitForPollers(client, [TASK_QUEUES.relay, TASK_QUEUES.consumer], 300_000);
      await startRelays(configuredRelayControl(config, client, pool), config.relay.shards);
    } finally {
      await connection.close();
    }

    const absorbed = new AbsorbedDuplicates(`http://127.0.0.1:${metricsPortBase + 1}/metrics`);
    absorbed.start();
    const faults = faultSchedule(opts.workerKills, opts.serviceCrashes);
    const plannedSeconds = faults.length * opts.faultEverySeconds;
    opts.log(`${opts.events} events over ~${plannedSeconds} s while ${faults.length} faults happen, one every ${opts.faultEverySeconds} s`);
    const producers = (['api', 'sql'] as const).map((kind) => startProducer(kind, pool, { total: Math.ceil(opts.events / 2), seconds: plannedSeconds, accounts: ACCOUNTS }));

    for (const fault of faults) {
      if (Date.now() > deadline) break;
      await sleep(opts.faultEverySeconds * 1000);
      if (fault === 'relay' || fault === 'consumer') {
        // A kill counts only if it hits a worker that is up and working, not one still starting.
        while (Date.now() < deadline && (!isRunning(workers.get(fault)) || Date.now() - upSince.get(fault)! < 3000)) await sleep(250);
        workers.get(fault)!.process.kill('SIGKILL');
        kills[fault]++;
      } else {
        await crashAndRestart(fault, config, paths, 1000);
        crashes[fault]++;
      }
      timeline.push({ atSeconds: elapsed(), fault: fault === 'relay' || fault === 'consumer' ? `kill -9 ${fault} worker` : `crash ${fault}` });
      opts.log(`${elapsed()} s: ${timeline.at(-1)!.fault}`);
    }
    // The producers finish their paced quota (or are cut off by the deadline).
    while (Date.now() < deadline && producers.some((p) => p.acknowledged * 5 < Math.ceil(opts.events / 2))) await sleep(500);
    for (const p of producers) await p.stop();
    opts.log(`${elapsed()} s: producers done; waiting for the pipeline to drain`);

    let drained = false;
    const drainDeadline = Math.max(deadline, Date.now() + 5 * 60_000);
    while (Date.now() < drainDeadline) {
      const ledger = await readLedger(pool).catch(() => undefined);
      if (ledger && ledger.lost === 0) { drained = true; break; }
      await sleep(2000);
    }
    const ledger = await readLedger(pool);
    const topic = await countTopicCopies(createKafka(config, 'fault-soak-tally'), config.kafka.topic);
    const duplicatesAbsorbed = await absorbed.stop();
    await opts.inspect?.(pool);
    return {
      events: { ...ledger.events, failedTransactions: producers.reduce((s, p) => s + p.failed, 0) },
      kills: { ...kills, total: kills.relay + kills.consumer },
      crashes,
      duplicatesDelivered: topic.duplicateCopies,
      duplicatesAbsorbed,
      lost: ledger.lost,
      doubleApplied: ledger.doubleApplied,
      parked: ledger.parked,
      drained,
      seconds: elapsed(),
      timeline,
    };
  } finally {
    supervising = false;
    await stopChildWorkers([...workers.values()], 5000);
    await pool.end().catch(() => undefined);
    await stackDown(config).catch(() => undefined);
    stack.remove();
  }
}

/** Worker kills alternate relay / consumer; the service crashes are spread evenly among them. */
export function faultSchedule(workerKills: number, serviceCrashes: number): (WorkerKind | CrashableService)[] {
  const kills: WorkerKind[] = Array.from({ length: workerKills }, (_, i) => (i % 2 === 0 ? 'relay' : 'consumer'));
  const crashes: CrashableService[] = Array.from({ length: serviceCrashes * SERVICES.length }, (_, i) => SERVICES[i % SERVICES.length]!);
  const all = kills.length + crashes.length;
  // Crash j sits in the middle of its own 1/C-th of the run.
  const crashSlots = new Set(crashes.map((_, j) => Math.floor(((j + 0.5) * all) / crashes.length)));
  const schedule: (WorkerKind | CrashableService)[] = [];
  for (let i = 0, k = 0, c = 0; i < all; i++) schedule.push(crashSlots.has(i) ? crashes[c++]! : kills[k++]!);
  return schedule;
}

function isRunning(worker: ChildWorker | undefined): boolean {
  return worker !== undefined && worker.process.exitCode === null && worker.process.signalCode === null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

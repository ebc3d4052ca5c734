import os from 'node:os';
import type { Client } from '@temporalio/client';
import type { RelayActivityMode } from '../../../workflows/relay/contract';
import type { RelayWorkerProcess } from '../../../test/kit/relay-worker-process';
import type { TestDatabase } from '../../../test/kit/database';
import { measureCpu, microsPerEvent } from './cpu-usage';
import { insertBacklog, waitDrained } from './outbox-backlog';
import { profileRelayHistory } from './relay-history-profile';
import { Relays } from './relay-shards';

// One relay throughput run, as bench:relay measures it and bench:zones repeats it over links
// with added latency: drain a backlog committed while the shards already run.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

/** Worker processes serving one task queue, started once and reused by every run on it. */
export interface WorkerPool {
  taskQueue: string;
  processes: RelayWorkerProcess[];
}

export interface ThroughputOpts {
  mode: RelayActivityMode;
  batchSize: number;
  shards: number;
  /** The session's drain grace (RELAY_DRAIN_GRACE_MS); the workflow's default when left out. */
  drainGraceMs?: number;
}

export async function throughputRun(db: TestDatabase, client: Client, workers: WorkerPool, opts: ThroughputOpts, events: number) {
  const relays = new Relays(client, workers.taskQueue);
  try {
    await db.pool.query(`TRUNCATE temporal_outbox.outbox_events; UPDATE temporal_outbox.outbox_relay_layout SET shard_count = NULL`);
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
    await insertBacklog(db, events);
    const insertSeconds = (Date.now() - t0) / 1000;
    await waitDrained(db, 180_000, 'backlog');
    const seconds = (Date.now() - t0) / 1000;
    const cpuUsage = cpu.stop();
    const peakRssMiB = Math.max(...workers.processes.map((w) => w.peakRssMiB() ?? 0));
    await relays.waitIdle();
    const eventsPerSecond = Math.round(events / seconds);
    console.log(
      `throughput ${opts.mode.padEnd(6)} batch=${opts.batchSize} shards=${opts.shards} workers=${workers.processes.length}: ${eventsPerSecond} events/s ` +
        `(${events} in ${seconds.toFixed(2)} s; inserts took ${insertSeconds.toFixed(2)} s; ${cpuUsage.coresBusy} of ${cpuUsage.cores} cores busy; ` +
        `worker peak RSS ${peakRssMiB} MiB; load ${loadAverage()[0]})`,
    );
    const cpuMicrosPerEvent = microsPerEvent(cpuUsage.cpuSeconds, events);
    return {
      ...opts,
      workers: workers.processes.length,
      events,
      cpuMicrosPerEvent,
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

import type { SqlExecutor } from '../../db/executor';
import type { LiveRelayWorker } from '../relay-placement';

/** Relay workers of one relay task queue whose heartbeat has not expired, by the database's clock. */
export const LIVE_RELAY_WORKERS_SQL = `
  SELECT worker_id, task_queue, links_ok_since, now() AS read_at
    FROM temporal_outbox.outbox_relay_workers
   WHERE relay_queue = $1 AND expires_at > now()
   ORDER BY worker_id`;

export interface LiveRelayWorkerRow {
  worker_id: string;
  task_queue: string;
  links_ok_since: Date | null;
  read_at: Date;
}

/** One live worker's row as the placement reads it. */
export function liveRelayWorker(r: Pick<LiveRelayWorkerRow, 'worker_id' | 'task_queue' | 'links_ok_since'>): LiveRelayWorker {
  return { workerId: r.worker_id, taskQueue: r.task_queue, ...(r.links_ok_since ? { linksOkSince: r.links_ok_since.getTime() } : {}) };
}

export async function liveRelayWorkers(db: SqlExecutor, relayQueue: string): Promise<LiveRelayWorker[]> {
  return (await readLiveRelayWorkers(db, relayQueue)).workers;
}

/** The live workers, and when they were read (the database's clock, ms since the epoch; undefined when none is live). */
export async function readLiveRelayWorkers(db: SqlExecutor, relayQueue: string): Promise<{ workers: LiveRelayWorker[]; readAt?: number }> {
  const { rows } = await db.query<LiveRelayWorkerRow>(LIVE_RELAY_WORKERS_SQL, [relayQueue]);
  return { workers: rows.map(liveRelayWorker), readAt: rows[0]?.read_at.getTime() };
}

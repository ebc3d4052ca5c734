import type { SqlExecutor } from '../../db/executor';
import type { LiveRelayWorker } from '../relay-placement';

/** Relay workers of one relay task queue whose heartbeat has not expired, by the database's clock. */
export const LIVE_RELAY_WORKERS_SQL = `
  SELECT worker_id, task_queue
    FROM temporal_outbox.outbox_relay_workers
   WHERE relay_queue = $1 AND expires_at > now()
   ORDER BY worker_id`;

export interface LiveRelayWorkerRow {
  worker_id: string;
  task_queue: string;
}

export async function liveRelayWorkers(db: SqlExecutor, relayQueue: string): Promise<LiveRelayWorker[]> {
  const { rows } = await db.query<LiveRelayWorkerRow>(LIVE_RELAY_WORKERS_SQL, [relayQueue]);
  return rows.map((r) => ({ workerId: r.worker_id, taskQueue: r.task_queue }));
}

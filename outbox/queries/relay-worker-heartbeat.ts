import type { SqlExecutor } from '../../db/executor';

/**
 * A relay worker says it is alive until now() + ttl (the database's clock, the one every worker
 * shares). The same statement forgets workers whose rows expired long ago, so the table holds
 * the live workers and the recently dead, never a history of every process that ever ran.
 */
export const RELAY_WORKER_HEARTBEAT_SQL = `
  WITH forgotten AS (
    DELETE FROM outbox_relay_workers
     WHERE relay_queue = $1 AND expires_at < now() - interval '1 hour')
  INSERT INTO outbox_relay_workers (relay_queue, worker_id, task_queue, expires_at)
  VALUES ($1, $2, $3, now() + $4::int * interval '1 millisecond')
  ON CONFLICT (relay_queue, worker_id)
  DO UPDATE SET heartbeat_at = now(), expires_at = EXCLUDED.expires_at, task_queue = EXCLUDED.task_queue`;

export interface RelayWorkerHeartbeat {
  relayQueue: string;
  workerId: string;
  taskQueue: string;
  ttlMs: number;
}

export async function heartbeatRelayWorker(db: SqlExecutor, hb: RelayWorkerHeartbeat): Promise<void> {
  await db.query(RELAY_WORKER_HEARTBEAT_SQL, [hb.relayQueue, hb.workerId, hb.taskQueue, hb.ttlMs]);
}

import type { SqlExecutor } from '../../db/executor';
import type { LiveRelayWorker } from '../relay-placement';

/**
 * A relay worker says it is alive until now() + ttl (the database's clock, the one every worker
 * shares) and reads who else is, in one statement: an idle worker costs one transaction per
 * heartbeat. The same statement forgets workers whose rows expired long ago, so the table holds
 * the live workers and the recently dead, never a history of every process that ever ran.
 * (The outer SELECT reads the statement's snapshot, taken before the upsert: the worker's own
 * row comes from RETURNING.)
 */
export const RELAY_WORKER_HEARTBEAT_SQL = `
  WITH forgotten AS (
    DELETE FROM temporal_outbox.outbox_relay_workers
     WHERE relay_queue = $1 AND expires_at < now() - interval '1 hour'),
  beat AS (
    INSERT INTO temporal_outbox.outbox_relay_workers (relay_queue, worker_id, task_queue, expires_at)
    VALUES ($1, $2, $3, now() + $4::int * interval '1 millisecond')
    ON CONFLICT (relay_queue, worker_id)
    DO UPDATE SET heartbeat_at = now(), expires_at = EXCLUDED.expires_at, task_queue = EXCLUDED.task_queue
    RETURNING worker_id, task_queue)
  SELECT worker_id, task_queue FROM beat
  UNION ALL
  SELECT worker_id, task_queue
    FROM temporal_outbox.outbox_relay_workers
   WHERE relay_queue = $1 AND worker_id <> $2 AND expires_at > now()`;

export interface RelayWorkerHeartbeat {
  relayQueue: string;
  workerId: string;
  taskQueue: string;
  ttlMs: number;
}

/** Renews this worker's row; returns every live worker of the relay queue, this one included. */
export async function heartbeatRelayWorker(db: SqlExecutor, hb: RelayWorkerHeartbeat): Promise<LiveRelayWorker[]> {
  const { rows } = await db.query<{ worker_id: string; task_queue: string }>(RELAY_WORKER_HEARTBEAT_SQL, [hb.relayQueue, hb.workerId, hb.taskQueue, hb.ttlMs]);
  return rows.map((r) => ({ workerId: r.worker_id, taskQueue: r.task_queue }));
}

import type { SqlExecutor } from '../../db/executor';
import type { LiveRelayWorker } from '../relay-placement';
import { liveRelayWorker } from './live-relay-workers';

/**
 * A relay worker says it is alive until now() + ttl (the database's clock, the one every worker
 * shares) and reads who else is, in one statement: an idle worker costs one transaction per
 * heartbeat. The same statement forgets workers whose rows expired long ago, so the table holds
 * the live workers and the recently dead, never a history of every process that ever ran.
 * It also says since when the worker's links have answered every health check (now() minus how
 * long, NULL while one fails: src/outbox/relay-avoidance.ts).
 * (The outer SELECT reads the statement's snapshot, taken before the upsert: the worker's own
 * row comes from RETURNING.)
 */
export const RELAY_WORKER_HEARTBEAT_SQL = `
  WITH forgotten AS (
    DELETE FROM temporal_outbox.outbox_relay_workers
     WHERE relay_queue = $1 AND expires_at < now() - interval '1 hour'),
  beat AS (
    INSERT INTO temporal_outbox.outbox_relay_workers (relay_queue, worker_id, task_queue, expires_at, links_ok_since)
    VALUES ($1, $2, $3, now() + $4::int * interval '1 millisecond', now() - $5::int * interval '1 millisecond')
    ON CONFLICT (relay_queue, worker_id)
    DO UPDATE SET heartbeat_at = now(), expires_at = EXCLUDED.expires_at, task_queue = EXCLUDED.task_queue, links_ok_since = EXCLUDED.links_ok_since
    RETURNING worker_id, task_queue, links_ok_since)
  SELECT worker_id, task_queue, links_ok_since FROM beat
  UNION ALL
  SELECT worker_id, task_queue, links_ok_since
    FROM temporal_outbox.outbox_relay_workers
   WHERE relay_queue = $1 AND worker_id <> $2 AND expires_at > now()`;

export interface RelayWorkerHeartbeat {
  relayQueue: string;
  workerId: string;
  taskQueue: string;
  ttlMs: number;
  /** How long the worker's links have answered every health check (ms); null while one fails. */
  linksOkForMs: number | null;
}

/** Renews this worker's row; returns every live worker of the relay queue, this one included. */
export async function heartbeatRelayWorker(db: SqlExecutor, hb: RelayWorkerHeartbeat): Promise<LiveRelayWorker[]> {
  const { rows } = await db.query<{ worker_id: string; task_queue: string; links_ok_since: Date | null }>(RELAY_WORKER_HEARTBEAT_SQL, [
    hb.relayQueue,
    hb.workerId,
    hb.taskQueue,
    hb.ttlMs,
    hb.linksOkForMs === null ? null : Math.round(hb.linksOkForMs),
  ]);
  return rows.map(liveRelayWorker);
}

import type { SqlExecutor } from '../../db/executor';
import { SHARD_LOCK_SPACE } from './shard-lock';

/** application_name of every relay session's connection: how a fence tells whose backend holds a shard. */
export const SESSION_APPLICATION_PREFIX = 'outbox-relay-session:';

/** The application_name of worker `workerId`'s session connections (PostgreSQL keeps 63 bytes of it). */
export function sessionApplicationName(workerId: string): string {
  return `${SESSION_APPLICATION_PREFIX}${workerId}`.slice(0, 63);
}

/**
 * Takes a shard's lock back from a worker that is gone: terminates the backend holding the shard's
 * advisory lock when it is a relay session (by its application_name) of a worker whose lease in
 * outbox_relay_workers has expired or was removed, and nothing else. The backend of a worker
 * behind a dead link looks alive to PostgreSQL (a proxy, a NAT or a load balancer still answers
 * for it) and would hold the shard for ever otherwise.
 *
 * pg_terminate_backend needs no grant here when every relay worker logs in as the same user (a
 * role may signal its own backends); with one login per worker, make each a member of the others
 * (docs/guarantees.md#fencing-a-lock-holder-that-is-gone). Returns the backends terminated (none: the holder is alive, or not a session).
 */
export const FENCE_SHARD_HOLDER_SQL = `
  SELECT a.pid, a.application_name, pg_terminate_backend(a.pid) AS terminated
    FROM pg_locks l
    JOIN pg_stat_activity a ON a.pid = l.pid
   WHERE l.locktype = 'advisory' AND l.granted
     AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND l.classid = $1::int AND l.objid = $2::int AND l.objsubid = 2
     AND a.pid <> pg_backend_pid()
     AND starts_with(a.application_name, $4::text)
     AND NOT EXISTS (
           SELECT 1 FROM temporal_outbox.outbox_relay_workers w
            WHERE w.relay_queue = $3 AND w.expires_at > now()
              AND left($4::text || w.worker_id, 63) = a.application_name)`;

export async function fenceShardHolder(db: SqlExecutor, relayQueue: string, shardIndex: number): Promise<{ pid: number; applicationName: string }[]> {
  const { rows } = await db.query<{ pid: number; application_name: string; terminated: boolean }>(FENCE_SHARD_HOLDER_SQL, [SHARD_LOCK_SPACE, shardIndex, relayQueue, SESSION_APPLICATION_PREFIX]);
  return rows.filter((r) => r.terminated).map((r) => ({ pid: r.pid, applicationName: r.application_name }));
}

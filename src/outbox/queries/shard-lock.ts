import type { SqlExecutor } from '../../db/executor';

/** Advisory lock space of relay shards (2830 is enqueue's per-key lock). Per database. */
export const SHARD_LOCK_SPACE = 2831;

/**
 * Session-level lock held by the connection a relay session polls on, for the session's life:
 * two sessions of one shard (a slow worker Temporal already gave up on, and its successor) never
 * relay at once. The lock goes with the connection, so a killed worker releases it the moment
 * PostgreSQL sees its socket close.
 */
export const TRY_SHARD_LOCK_SQL = `SELECT pg_try_advisory_lock($1::int, $2::int) AS locked`;

export async function tryShardLock(db: SqlExecutor, shardIndex: number): Promise<boolean> {
  const { rows } = await db.query<{ locked: boolean }>(TRY_SHARD_LOCK_SQL, [SHARD_LOCK_SPACE, shardIndex]);
  return rows[0]!.locked;
}


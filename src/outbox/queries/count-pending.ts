import type { SqlExecutor } from '../../db/executor';
import { FROM_THE_BEGINNING } from './fetch-pending-ids';

/**
 * Pending and parked rows of one shard, for the relay's status. Both read only their partial
 * indexes; pending is capped so a huge backlog costs a bounded scan ("at least N"), and starts at
 * the relay's proven bound (`id > $4`) so it does not walk the dead entries of published rows.
 */
export const COUNT_SHARD_BACKLOG_SQL = `
  SELECT (SELECT count(*) FROM (
            SELECT 1 FROM temporal_outbox.outbox_events
             WHERE published_at IS NULL AND parked_at IS NULL
               AND (shard_hash & 2147483647) % $1::int = $2::int
               AND id > $4::bigint
             LIMIT $3::int) AS p) AS pending,
         (SELECT count(*) FROM temporal_outbox.outbox_events
           WHERE parked_at IS NOT NULL AND published_at IS NULL
             AND (shard_hash & 2147483647) % $1::int = $2::int) AS parked`;

export async function countShardBacklog(db: SqlExecutor, input: { shardCount: number; shardIndex: number; cap: number; afterId?: number }): Promise<{ pending: number; parked: number }> {
  const { rows } = await db.query<{ pending: string; parked: string }>(COUNT_SHARD_BACKLOG_SQL, [input.shardCount, input.shardIndex, input.cap, input.afterId ?? FROM_THE_BEGINNING]);
  return { pending: Number(rows[0]!.pending), parked: Number(rows[0]!.parked) };
}

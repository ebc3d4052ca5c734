import type { SqlExecutor } from '../../db/executor';

/**
 * The relay's poll: the oldest pending ids of one shard. It reads only the partial index
 * outbox_events_pending_idx, whose size is the number of pending rows, not the table's.
 * Shards split the key space by `shard_hash`, so every event of one key lands on one shard.
 * `& 2147483647` keeps the modulo non-negative for negative hashes.
 *
 * The doctor runs EXPLAIN ANALYZE on this exact text, so the diagnosis is of the real query.
 */
export const FETCH_PENDING_IDS_SQL = `
  SELECT id
    FROM outbox_events
   WHERE published_at IS NULL
     AND parked_at IS NULL
     AND (shard_hash & 2147483647) % $1::int = $2::int
   ORDER BY id
   LIMIT $3::int`;

export interface FetchPendingIdsInput {
  shardCount: number;
  shardIndex: number;
  limit: number;
}

export async function fetchPendingIds(db: SqlExecutor, input: FetchPendingIdsInput): Promise<number[]> {
  const { rows } = await db.query<{ id: string }>(FETCH_PENDING_IDS_SQL, [input.shardCount, input.shardIndex, input.limit]);
  // bigint arrives as a string; ids stay far below 2^53 (9 quadrillion events).
  return rows.map((r) => Number(r.id));
}

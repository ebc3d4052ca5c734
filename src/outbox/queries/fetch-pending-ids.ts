import type { SqlExecutor } from '../../db/executor';

/**
 * The relay's poll: the oldest pending ids of one shard. It reads only the partial index
 * outbox_events_pending_idx, whose size is the number of pending rows, not the table's.
 * Shards split the key space by `shard_hash`, so every event of one key lands on one shard.
 * `& 2147483647` keeps the modulo non-negative for negative hashes.
 *
 * `id > $4` starts the index scan past the shard's already-published prefix: while vacuum is held
 * back, that prefix is dead index entries the scan would otherwise walk on every call. The relay
 * passes a bound it has proven safe (activities/relay/pending-scan-bound.ts); NO_BOUND
 * (-2^53 + 1) reads from the beginning.
 *
 * The doctor runs EXPLAIN ANALYZE on this exact text, so the diagnosis is of the real query.
 */
export const FETCH_PENDING_IDS_SQL = `
  SELECT id
    FROM temporal_outbox.outbox_events
   WHERE published_at IS NULL
     AND parked_at IS NULL
     AND (shard_hash & 2147483647) % $1::int = $2::int
     AND id > $4::bigint
   ORDER BY id
   LIMIT $3::int`;

/**
 * The same poll, skipping ids the relay is still marking published (the previous batch: sent to
 * Kafka, its UPDATE in flight). The skipped entries are at most one batch, read and passed over
 * in the same partial index.
 */
export const FETCH_PENDING_IDS_EXCLUDING_SQL = `
  SELECT id
    FROM temporal_outbox.outbox_events
   WHERE published_at IS NULL
     AND parked_at IS NULL
     AND (shard_hash & 2147483647) % $1::int = $2::int
     AND id > $4::bigint
     AND id <> ALL($5::bigint[])
   ORDER BY id
   LIMIT $3::int`;

export interface FetchPendingIdsInput {
  shardCount: number;
  shardIndex: number;
  limit: number;
  /** Only ids above this (a proven-safe bound); leave out to read from the beginning. */
  afterId?: number;
  excludeIds?: number[];
}

/** Below every id: the poll reads the whole pending index. */
export const FROM_THE_BEGINNING = Number.MIN_SAFE_INTEGER;

export async function fetchPendingIds(db: SqlExecutor, input: FetchPendingIdsInput): Promise<number[]> {
  const params = [input.shardCount, input.shardIndex, input.limit, input.afterId ?? FROM_THE_BEGINNING];
  const { rows } = input.excludeIds?.length
    ? await db.query<{ id: string }>(FETCH_PENDING_IDS_EXCLUDING_SQL, [...params, input.excludeIds])
    : await db.query<{ id: string }>(FETCH_PENDING_IDS_SQL, params);
  // bigint arrives as a string; ids stay far below 2^53 (9 quadrillion events).
  return rows.map((r) => Number(r.id));
}

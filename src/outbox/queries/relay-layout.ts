import type { SqlExecutor } from '../../db/executor';

/**
 * The shard count every relay must agree with. The first relay to run records its own count
 * (into a row setup may have created already for the key field, with no count yet); later ones
 * only read it. The conflict's update re-checks the latest row version, so of two relays racing
 * on a countless row only the first writes its count.
 */
export const ENSURE_LAYOUT_SQL = `
  WITH inserted AS (
    INSERT INTO temporal_outbox.outbox_relay_layout AS l (shard_count) VALUES ($1::int)
    ON CONFLICT (singleton) DO UPDATE SET shard_count = EXCLUDED.shard_count, updated_at = now()
      WHERE l.shard_count IS NULL
    RETURNING shard_count)
  SELECT shard_count FROM inserted
  UNION ALL
  SELECT shard_count FROM temporal_outbox.outbox_relay_layout WHERE shard_count IS NOT NULL
  LIMIT 1`;

export async function ensureLayout(db: SqlExecutor, shardCount: number): Promise<number> {
  const { rows } = await db.query<{ shard_count: number }>(ENSURE_LAYOUT_SQL, [shardCount]);
  if (rows[0]) return rows[0].shard_count;
  // Two relays recording at once on a fresh database: the loser's INSERT (or its conflict's
  // update) waited for the winner's commit and did nothing, and its SELECT ran on the statement's snapshot, taken before that
  // commit, so it saw no row either. A new statement sees the winner's row.
  const recorded = await readLayout(db);
  if (recorded === undefined) throw new Error('outbox_relay_layout: no row after recording one (was it deleted concurrently?)');
  return recorded;
}

export const SET_LAYOUT_SQL = `
  INSERT INTO temporal_outbox.outbox_relay_layout (shard_count) VALUES ($1::int)
  ON CONFLICT (singleton) DO UPDATE SET shard_count = EXCLUDED.shard_count, updated_at = now()`;

/** Only the reshard procedure calls this, after every relay of the old layout has stopped. */
export async function setLayout(db: SqlExecutor, shardCount: number): Promise<void> {
  await db.query(SET_LAYOUT_SQL, [shardCount]);
}

export async function readLayout(db: SqlExecutor): Promise<number | undefined> {
  const { rows } = await db.query<{ shard_count: number }>(`SELECT shard_count FROM temporal_outbox.outbox_relay_layout WHERE shard_count IS NOT NULL`);
  return rows[0]?.shard_count;
}

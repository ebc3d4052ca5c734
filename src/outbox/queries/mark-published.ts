import { integerArrayLiteral } from '../../db/array-literal';
import type { SqlExecutor } from '../../db/executor';

/**
 * Marks sent rows published. `published_at IS NULL` makes a retried mark a no-op for rows
 * already marked, and leaves alone a row an operator reset meanwhile only if it was re-sent.
 */
export const MARK_PUBLISHED_SQL = `
  UPDATE temporal_outbox.outbox_events
     SET published_at = now()
   WHERE id = ANY($1::bigint[])
     AND published_at IS NULL`;

export async function markPublished(db: SqlExecutor, ids: number[]): Promise<number> {
  if (ids.length === 0) return 0;
  const { rowCount } = await db.query(MARK_PUBLISHED_SQL, [integerArrayLiteral(ids)]);
  return rowCount ?? 0;
}

/** The same mark, saying which ids it marked: a mark carrying several shards' batches at once tells each its own count. */
export async function markPublishedReturningIds(db: SqlExecutor, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(`${MARK_PUBLISHED_SQL} RETURNING id`, [integerArrayLiteral(ids)]);
  return rows.map((r) => Number(r.id));
}

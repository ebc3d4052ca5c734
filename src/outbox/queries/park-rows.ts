import type { SqlExecutor } from '../../db/executor';

/**
 * Parks rows that can never be published as they are (malformed payload, too large): they
 * leave the pending index at once, keep their reason, and wait for an operator's redrive.
 */
export const PARK_ROWS_SQL = `
  UPDATE temporal_outbox.outbox_events AS o
     SET parked_at = now(), last_error = r.reason, attempts = o.attempts + 1
    FROM unnest($1::bigint[], $2::text[]) AS r(id, reason)
   WHERE o.id = r.id
     AND o.published_at IS NULL
     AND o.parked_at IS NULL`;

export async function parkRows(db: SqlExecutor, rows: { id: number; reason: string }[]): Promise<number> {
  if (rows.length === 0) return 0;
  const { rowCount } = await db.query(PARK_ROWS_SQL, [rows.map((r) => r.id), rows.map((r) => r.reason)]);
  return rowCount ?? 0;
}

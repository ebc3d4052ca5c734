import type { SqlExecutor } from '../../db/executor';

/**
 * Counts one failed send per row and parks the rows that reached the attempt limit, in one
 * statement. Returns which rows are now parked, so the caller can report them.
 */
export const RECORD_FAILURES_SQL = `
  UPDATE temporal_outbox.outbox_events AS o
     SET attempts = o.attempts + 1,
         last_error = r.error,
         parked_at = CASE WHEN o.attempts + 1 >= $3::int THEN now() END
    FROM unnest($1::bigint[], $2::text[]) AS r(id, error)
   WHERE o.id = r.id
     AND o.published_at IS NULL
     AND o.parked_at IS NULL
  RETURNING o.id, o.parked_at IS NOT NULL AS parked`;

export async function recordFailures(db: SqlExecutor, rows: { id: number; error: string }[], maxAttempts: number): Promise<{ parkedIds: number[] }> {
  if (rows.length === 0) return { parkedIds: [] };
  const result = await db.query<{ id: string; parked: boolean }>(RECORD_FAILURES_SQL, [rows.map((r) => r.id), rows.map((r) => r.error), maxAttempts]);
  return { parkedIds: result.rows.filter((r) => r.parked).map((r) => Number(r.id)) };
}

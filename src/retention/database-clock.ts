import type { SqlExecutor } from '../db/executor';

/**
 * `now() - age` on the database's clock. published_at and processed_at are written by the
 * database's now(), so the cutoff must come from the same clock, not a worker's.
 */
export async function databaseTimeAgo(db: SqlExecutor, ageMs: number): Promise<Date> {
  const { rows } = await db.query<{ at: Date }>(`SELECT now() - make_interval(secs => $1::float8 / 1000) AS at`, [ageMs]);
  return rows[0]!.at;
}

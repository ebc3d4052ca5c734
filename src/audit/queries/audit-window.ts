import type { SqlExecutor } from '../../db/executor';

/**
 * The audit window on the database's clock (created_at is the database's now()):
 * [now - settle - window, now - settle). Events younger than `settle` may still be on their way.
 */
export const AUDIT_WINDOW_SQL = `
  SELECT now() - make_interval(secs => ($1::float8 + $2::float8) / 1000) AS "from",
         now() - make_interval(secs => $2::float8 / 1000)                AS "to"`;

export async function auditWindow(db: SqlExecutor, windowMs: number, settleMs: number): Promise<{ from: string; to: string }> {
  const { rows } = await db.query<{ from: Date; to: Date }>(AUDIT_WINDOW_SQL, [windowMs, settleMs]);
  return { from: rows[0]!.from.toISOString(), to: rows[0]!.to.toISOString() };
}

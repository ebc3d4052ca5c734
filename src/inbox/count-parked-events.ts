import type { SqlExecutor } from '../db/executor';

/** Parked events of one inbox consumer, for its metrics; the count stops at $2 rows. */
export const COUNT_PARKED_EVENTS_SQL = `
  SELECT count(*)::bigint AS parked FROM (SELECT 1 FROM temporal_outbox.inbox_parked_events WHERE consumer = $1 AND redriven_at IS NULL LIMIT $2::int) AS p`;

export async function countParkedEvents(db: SqlExecutor, consumer: string, cap: number): Promise<number> {
  const { rows } = await db.query<{ parked: string }>(COUNT_PARKED_EVENTS_SQL, [consumer, cap]);
  return Number(rows[0]!.parked);
}

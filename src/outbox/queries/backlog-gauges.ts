import type { SqlExecutor } from '../../db/executor';

/**
 * The relay's backlog for its metrics, in one round trip and bounded however large the backlog:
 * both counts stop at $1 rows of their partial index, and the oldest pending age looks at the
 * first 1,000 pending ids only (ids are nearly commit order; an older straggler among a huge
 * backlog can hide, a stalled relay cannot).
 */
export const BACKLOG_GAUGES_SQL = `
  SELECT (SELECT count(*) FROM (
            SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL LIMIT $1::int) AS p)::bigint AS pending,
         (SELECT extract(epoch FROM now() - min(created_at)) FROM (
            SELECT created_at FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL ORDER BY id LIMIT 1000) AS o)::float8 AS oldest_age_s,
         (SELECT count(*) FROM (
            SELECT 1 FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL AND published_at IS NULL LIMIT $1::int) AS q)::bigint AS parked`;

export interface BacklogGauges {
  pending: number;
  /** null when nothing is pending. */
  oldestPendingAgeSeconds: number | null;
  parked: number;
}

export async function readBacklogGauges(db: SqlExecutor, cap: number): Promise<BacklogGauges> {
  const { rows } = await db.query<{ pending: string; oldest_age_s: number | null; parked: string }>(BACKLOG_GAUGES_SQL, [cap]);
  const row = rows[0]!;
  return { pending: Number(row.pending), oldestPendingAgeSeconds: row.oldest_age_s, parked: Number(row.parked) };
}

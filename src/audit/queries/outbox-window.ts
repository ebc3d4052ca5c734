import type { SqlExecutor } from '../../db/executor';
import type { ParkedEvent } from '../types';

/**
 * What became of the outbox rows created in the audit window. created_at has no index (the hot
 * table carries only the partial pending/parked indexes), so this reads the table once; retention
 * keeps it to about RETENTION_WINDOW_MS of events. The parked list reads the parked index.
 */
export const OUTBOX_WINDOW_SQL = `
  WITH w AS (
    SELECT published_at, parked_at FROM temporal_outbox.outbox_events WHERE created_at >= $1::timestamptz AND created_at < $2::timestamptz
  )
  SELECT count(*)::int                                                        AS events,
         count(*) FILTER (WHERE published_at IS NOT NULL)::int                AS published,
         count(*) FILTER (WHERE published_at IS NULL AND parked_at IS NULL)::int     AS pending,
         count(*) FILTER (WHERE published_at IS NULL AND parked_at IS NOT NULL)::int AS parked
    FROM w`;

export const OUTBOX_WINDOW_PARKED_SQL = `
  SELECT id, payload ->> 'event_id' AS event_id, coalesce(last_error, 'parked without a recorded reason') AS reason
    FROM temporal_outbox.outbox_events
   WHERE parked_at IS NOT NULL AND published_at IS NULL
     AND created_at >= $1::timestamptz AND created_at < $2::timestamptz
   ORDER BY id
   LIMIT $3::int`;

export interface OutboxWindowCounts {
  events: number;
  published: number;
  pending: number;
  parked: number;
}

export async function outboxWindowCounts(db: SqlExecutor, from: string, to: string): Promise<OutboxWindowCounts> {
  const { rows } = await db.query<OutboxWindowCounts>(OUTBOX_WINDOW_SQL, [from, to]);
  return rows[0]!;
}

export async function outboxWindowParked(db: SqlExecutor, from: string, to: string, limit: number): Promise<ParkedEvent[]> {
  const { rows } = await db.query<{ id: string; event_id: string | null; reason: string }>(OUTBOX_WINDOW_PARKED_SQL, [from, to, limit]);
  return rows.map((r) => ({ where: 'outbox', outboxId: Number(r.id), eventId: r.event_id, reason: r.reason }));
}

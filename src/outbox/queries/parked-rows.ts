import type { SqlExecutor } from '../../db/executor';
import { OUTBOX_NOTIFY_CHANNEL, RESCAN_NOTIFY_PAYLOAD } from '../notify-channel';

export const LIST_PARKED_SQL = `
  SELECT id, event_type, coalesce(event_key, payload ->> 'event_id') AS message_key,
         attempts, last_error, parked_at, created_at
    FROM temporal_outbox.outbox_events
   WHERE parked_at IS NOT NULL AND published_at IS NULL
   ORDER BY id
   LIMIT $1::int`;

export interface ParkedRow {
  id: number;
  eventType: string;
  messageKey: string | null;
  attempts: number;
  lastError: string | null;
  parkedAt: Date;
  createdAt: Date;
}

export async function listParked(db: SqlExecutor, limit = 100): Promise<ParkedRow[]> {
  const { rows } = await db.query(LIST_PARKED_SQL, [limit]);
  return rows.map((r) => ({
    id: Number(r.id),
    eventType: r.event_type,
    messageKey: r.message_key,
    attempts: r.attempts,
    lastError: r.last_error,
    parkedAt: r.parked_at,
    createdAt: r.created_at,
  }));
}

/**
 * Puts parked rows back in the queue with a fresh attempt budget. last_error stays as a record
 * of why it was parked until the next failure overwrites it. `ids` null means every parked row.
 */
export const REDRIVE_SQL = `
  UPDATE temporal_outbox.outbox_events
     SET parked_at = NULL, attempts = 0
   WHERE parked_at IS NOT NULL AND published_at IS NULL
     AND ($1::bigint[] IS NULL OR id = ANY($1::bigint[]))
  RETURNING id`;

export async function redriveParked(db: SqlExecutor, ids: number[] | null): Promise<number[]> {
  const { rows } = await db.query<{ id: string }>(REDRIVE_SQL, [ids]);
  // The insert trigger does not fire for an UPDATE: wake idle relays ourselves.
  if (rows.length > 0) await db.query(`SELECT pg_notify($1, $2)`, [OUTBOX_NOTIFY_CHANNEL, RESCAN_NOTIFY_PAYLOAD]);
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

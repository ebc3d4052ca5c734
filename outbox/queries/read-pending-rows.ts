import type { SqlExecutor } from '../../db/executor';

/**
 * Bodies of the given outbox ids that are still pending, in id order. The checks the relay
 * needs are done here, in SQL, so Node never parses the payload: it is forwarded as the text
 * PostgreSQL renders, and only its type, event id and size are inspected.
 * Rows already published or parked in the meantime are simply not returned (nothing to send).
 */
export const READ_PENDING_ROWS_SQL = `
  SELECT id,
         event_type,
         coalesce(event_key, payload ->> 'account_id', payload ->> 'event_id') AS message_key,
         headers,
         created_at,
         attempts,
         jsonb_typeof(payload) AS payload_kind,
         CASE WHEN jsonb_typeof(payload -> 'event_id') = 'string' THEN payload ->> 'event_id' END AS event_id,
         payload ->> 'type' AS payload_type,
         payload::text AS value
    FROM outbox_events
   WHERE id = ANY($1::bigint[])
     AND published_at IS NULL
     AND parked_at IS NULL
   ORDER BY id`;

export interface PendingRow {
  id: number;
  eventType: string;
  messageKey: string | null;
  headers: Record<string, unknown>;
  createdAt: Date;
  attempts: number;
  payloadKind: string;
  eventId: string | null;
  /** The payload's own `type`, when it has one: it must agree with event_type. */
  payloadType: string | null;
  value: string;
}

export async function readPendingRows(db: SqlExecutor, ids: number[]): Promise<PendingRow[]> {
  const { rows } = await db.query<{
    id: string;
    event_type: string;
    message_key: string | null;
    headers: Record<string, unknown> | null;
    created_at: Date;
    attempts: number;
    payload_kind: string;
    event_id: string | null;
    payload_type: string | null;
    value: string;
  }>(READ_PENDING_ROWS_SQL, [ids]);
  return rows.map((r) => ({
    id: Number(r.id),
    eventType: r.event_type,
    messageKey: r.message_key,
    headers: r.headers ?? {},
    createdAt: r.created_at,
    attempts: r.attempts,
    payloadKind: r.payload_kind,
    eventId: r.event_id,
    payloadType: r.payload_type,
    value: r.value,
  }));
}

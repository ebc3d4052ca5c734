import type { SqlExecutor } from '../../db/executor';

/**
 * What the relay reads of a pending row to send it, over `outbox_events` aliased `e`. The checks
 * the relay needs are done here, in SQL, so Node never parses the payload: it is forwarded as the
 * text PostgreSQL renders, and only its type, event id and size are inspected.
 */
export const PENDING_ROW_COLUMNS: [expression: string, name: string][] = [
  ['e.event_type', 'event_type'],
  [`coalesce(e.event_key, e.payload ->> 'event_id')`, 'message_key'],
  ['e.headers', 'headers'],
  // In the header's format (Date#toISOString: UTC, milliseconds, truncated as JavaScript's Date
  // truncates): parsing each row's timestamp into a Date only to print it again was a visible
  // share of the relay worker's CPU at full speed (docs/measurements/relay-log.md, "Figures behind code comments").
  [`to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`, 'created_at'],
  ['e.attempts', 'attempts'],
  ['jsonb_typeof(e.payload)', 'payload_kind'],
  [`CASE WHEN jsonb_typeof(e.payload -> 'event_id') = 'string' THEN e.payload ->> 'event_id' END`, 'event_id'],
  [`e.payload ->> 'type'`, 'payload_type'],
  ['e.payload::text', 'value'],
];

/**
 * Bodies of the given outbox ids that are still pending, in id order. Rows already published or
 * parked in the meantime are simply not returned (nothing to send).
 */
export const READ_PENDING_ROWS_SQL = `
  SELECT e.id,
         ${PENDING_ROW_COLUMNS.map(([expression, name]) => `${expression} AS ${name}`).join(',\n         ')}
    FROM temporal_outbox.outbox_events e
   WHERE e.id = ANY($1::bigint[])
     AND e.published_at IS NULL
     AND e.parked_at IS NULL
   ORDER BY e.id`;

export interface PendingRow {
  id: number;
  eventType: string;
  messageKey: string | null;
  headers: Record<string, unknown>;
  /** created_at as ISO 8601 text in UTC with milliseconds, as `Date#toISOString` writes it. */
  createdAt: string;
  attempts: number;
  payloadKind: string;
  eventId: string | null;
  /** The payload's own `type`, when it has one: it must agree with event_type. */
  payloadType: string | null;
  value: string;
}

/** A result row carrying PENDING_ROW_COLUMNS, as PostgreSQL returns it. */
export interface PendingRowColumns {
  id: string;
  event_type: string;
  message_key: string | null;
  headers: Record<string, unknown> | null;
  created_at: string;
  attempts: number;
  payload_kind: string;
  event_id: string | null;
  payload_type: string | null;
  value: string;
}

export function toPendingRow(r: PendingRowColumns): PendingRow {
  return {
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
  };
}

export async function readPendingRows(db: SqlExecutor, ids: number[]): Promise<PendingRow[]> {
  const { rows } = await db.query<PendingRowColumns>(READ_PENDING_ROWS_SQL, [ids]);
  return rows.map(toPendingRow);
}

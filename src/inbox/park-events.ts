import type { SqlExecutor } from '../db/executor';

// Invalid messages are parked with their reason, keyed by their Kafka position: a redelivered
// bad message hits the unique key and is not parked twice (nor is its dead-letter copy owed twice).

export interface ParkedMessage {
  offset: string;
  eventId?: string;
  reason: string;
  rawValue: string | null;
  /** Set when the message is owed a dead-letter copy: the original, byte for byte, until it is sent. */
  deadLetter?: DeadLetterOriginal;
}

/** A message's key, value and headers as received; header values base64, in order. */
export interface DeadLetterOriginal {
  /** The dead-letter topic the copy is owed to. */
  topic: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: Record<string, string[]>;
}

/** Parked raw values are for people to read; a hostile 1 MB payload is cut to this. */
export const MAX_PARKED_VALUE_CHARS = 64 * 1024;

export const PARK_EVENTS_SQL = `
INSERT INTO temporal_outbox.inbox_parked_events (consumer, topic, kafka_partition, kafka_offset, event_id, reason, raw_value,
                                 dead_letter_state, dead_letter_topic, dead_letter_key, dead_letter_value, dead_letter_headers, dead_letter_due_at)
SELECT $1, $2, $3, t.kafka_offset, t.event_id, t.reason, t.raw_value,
       CASE WHEN t.dl_topic IS NOT NULL THEN 'pending' END, t.dl_topic, t.dl_key, t.dl_value, t.dl_headers,
       CASE WHEN t.dl_topic IS NOT NULL THEN now() END
FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bytea[], $10::bytea[], $11::jsonb[])
     AS t(kafka_offset, event_id, reason, raw_value, dl_topic, dl_key, dl_value, dl_headers)
ON CONFLICT (consumer, topic, kafka_partition, kafka_offset) DO NOTHING`;

export async function parkEvents(
  db: SqlExecutor,
  where: { consumer: string; topic: string; partition: number },
  messages: ParkedMessage[],
): Promise<number> {
  if (messages.length === 0) return 0;
  const result = await db.query(PARK_EVENTS_SQL, [
    where.consumer,
    where.topic,
    where.partition,
    messages.map((m) => m.offset),
    messages.map((m) => m.eventId ?? null),
    messages.map((m) => m.reason),
    messages.map((m) => (m.rawValue === null ? null : storableText(m.rawValue))),
    messages.map((m) => m.deadLetter?.topic ?? null),
    messages.map((m) => m.deadLetter?.key ?? null),
    messages.map((m) => m.deadLetter?.value ?? null),
    messages.map((m) => (m.deadLetter ? JSON.stringify(m.deadLetter.headers) : null)),
  ]);
  return result.rowCount ?? 0;
}

/** PostgreSQL text cannot hold NUL; keep the evidence readable instead of failing the insert. */
export function storableText(value: string): string {
  const text = value.replaceAll('\u0000', '\\u0000');
  return text.length > MAX_PARKED_VALUE_CHARS ? `${text.slice(0, MAX_PARKED_VALUE_CHARS)}... [truncated]` : text;
}

import type { SqlExecutor } from '../db/executor';

// Invalid messages are parked with their reason, keyed by their Kafka position: a redelivered
// bad message hits the unique key and is not parked twice.

export interface ParkedMessage {
  offset: string;
  eventId?: string;
  reason: string;
  rawValue: string | null;
}

/** Parked raw values are for people to read; a hostile 1 MB payload is cut to this. */
export const MAX_PARKED_VALUE_CHARS = 64 * 1024;

export const PARK_EVENTS_SQL = `
INSERT INTO inbox_parked_events (consumer, topic, kafka_partition, kafka_offset, event_id, reason, raw_value)
SELECT $1, $2, $3, t.kafka_offset, t.event_id, t.reason, t.raw_value
FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[]) AS t(kafka_offset, event_id, reason, raw_value)
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
  ]);
  return result.rowCount ?? 0;
}

/** PostgreSQL text cannot hold NUL; keep the evidence readable instead of failing the insert. */
export function storableText(value: string): string {
  const text = value.replaceAll('\u0000', '\\u0000');
  return text.length > MAX_PARKED_VALUE_CHARS ? `${text.slice(0, MAX_PARKED_VALUE_CHARS)}... [truncated]` : text;
}

import type { SqlExecutor } from '../db/executor';
import { storableText } from './park-events';

// Events a handler refused, parked with the reason at their Kafka position (a batch spans
// topics and partitions); a redelivered refusal hits the unique key and is not parked twice.

export interface RejectedEvent {
  topic: string;
  partition: number;
  offset: string;
  eventId: string;
  reason: string;
  rawValue: string;
  /** For a conflicting duplicate: the applied version (when it was in hand) and its payload hash. */
  appliedValue?: string;
  appliedPayloadHash?: string;
  /** For a handler's refusal: the event as the handler saw it, kept so that a redrive can apply it later. */
  event?: { eventType: string; data: unknown; payloadHash: string };
}

export const PARK_REJECTED_EVENTS_SQL = `
INSERT INTO temporal_outbox.inbox_parked_events (consumer, topic, kafka_partition, kafka_offset, event_id, reason, raw_value, applied_value, applied_payload_hash,
                                 event_type, event_data, payload_hash)
SELECT $1, t.topic, t.kafka_partition, t.kafka_offset, t.event_id, t.reason, t.raw_value, t.applied_value, t.applied_payload_hash,
       t.event_type, t.event_data, t.payload_hash
FROM unnest($2::text[], $3::int[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::jsonb[], $12::text[])
     AS t(topic, kafka_partition, kafka_offset, event_id, reason, raw_value, applied_value, applied_payload_hash, event_type, event_data, payload_hash)
ON CONFLICT (consumer, topic, kafka_partition, kafka_offset) DO NOTHING`;

export async function parkRejectedEvents(db: SqlExecutor, consumer: string, events: RejectedEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const result = await db.query(PARK_REJECTED_EVENTS_SQL, [
    consumer,
    events.map((e) => e.topic),
    events.map((e) => e.partition),
    events.map((e) => e.offset),
    events.map((e) => e.eventId),
    events.map((e) => storableText(e.reason)),
    events.map((e) => storableText(e.rawValue)),
    events.map((e) => (e.appliedValue === undefined ? null : storableText(e.appliedValue))),
    events.map((e) => e.appliedPayloadHash ?? null),
    events.map((e) => e.event?.eventType ?? null),
    events.map((e) => (e.event ? JSON.stringify(e.event.data ?? null) : null)),
    events.map((e) => e.event?.payloadHash ?? null),
  ]);
  return result.rowCount ?? 0;
}

import type { SqlExecutor } from '../db/executor';
import type { EventBatch, RedriveInput, RedriveResult } from '../../workflows/inbox/contract';
import { applyEventsInTransaction } from './apply-events';
import type { HandlerRegistry } from './handler';

// Redrive: parked events a handler refused (a missing row, a business rule) are applied
// again once their cause is fixed, through the same inbox guard as a delivery from Kafka, in
// one transaction with the parked rows locked. An event applied (now or by an earlier delivery)
// marks its parked row redriven; redriving it again finds nothing to do, and even a redrive that
// raced another is a duplicate to the inbox: credited once, however often redriven.

interface ParkedForRedrive {
  id: string;
  topic: string;
  kafka_partition: number;
  kafka_offset: string;
  event_id: string | null;
  event_type: string | null;
  event_data: unknown;
  payload_hash: string | null;
}

export const LOCK_PARKED_FOR_REDRIVE_SQL = `
SELECT id::text, topic, kafka_partition, kafka_offset::text, event_id, event_type, event_data, payload_hash
  FROM temporal_outbox.inbox_parked_events
 WHERE consumer = $1 AND redriven_at IS NULL
   AND ($2::bigint[] IS NULL OR id = ANY($2::bigint[]))
   AND id > $3::bigint
 ORDER BY id
 LIMIT $4
   FOR UPDATE`;

export const MARK_REDRIVEN_SQL = `
UPDATE temporal_outbox.inbox_parked_events p
   SET redriven_at = now()
  FROM temporal_outbox.inbox_processed_events i
 WHERE p.id = ANY($1::bigint[]) AND i.consumer = p.consumer AND i.event_id = p.event_id
   AND (i.payload_hash IS NULL OR i.payload_hash = p.payload_hash)
RETURNING p.id::text`;

/** One page of a redrive (rows after `afterId`, up to `limit`), inside the caller's transaction. */
export async function redriveParkedEvents(tx: SqlExecutor, registry: HandlerRegistry, input: RedriveInput): Promise<RedriveResult> {
  const { rows } = await tx.query<ParkedForRedrive>(LOCK_PARKED_FOR_REDRIVE_SQL, [input.consumer, input.ids ?? null, input.afterId ?? '0', input.limit]);
  const notRedrivable = rows
    .filter((r) => r.event_type === null || r.event_id === null || r.payload_hash === null)
    .map((r) => ({ id: r.id, why: 'not a handler refusal (an invalid message, a conflicting duplicate or an unknown type): fix the producer and publish the event again' }));
  const redrivable = rows.filter((r) => r.event_type !== null && r.event_id !== null && r.payload_hash !== null);
  const topics = [...new Set(redrivable.map((r) => r.topic))];
  const batch: EventBatch = {
    consumer: input.consumer,
    topics,
    eventIds: redrivable.map((r) => r.event_id!),
    eventTypes: redrivable.map((r) => r.event_type!),
    topicIndex: redrivable.map((r) => topics.indexOf(r.topic)),
    partitions: redrivable.map((r) => r.kafka_partition),
    offsets: redrivable.map((r) => r.kafka_offset),
    data: redrivable.map((r) => r.event_data),
    payloadHashes: redrivable.map((r) => r.payload_hash!),
  };
  // No apply spans for a redrive (they are recorded after a delivery's COMMIT); the redrive's own
  // workflow is its record in the UI.
  const applied = redrivable.length > 0 ? (await applyEventsInTransaction(tx, registry, batch)).result : { applied: 0, duplicates: 0, rejected: 0, conflicts: 0 };
  const marked = redrivable.length > 0 ? (await tx.query<{ id: string }>(MARK_REDRIVEN_SQL, [redrivable.map((r) => r.id)])).rows.map((r) => r.id) : [];
  const done = new Set(marked);
  return {
    redriven: marked,
    stillParked: redrivable.filter((r) => !done.has(r.id)).map((r) => r.id),
    notRedrivable,
    applied: applied.applied,
    duplicates: applied.duplicates,
    lastId: rows.at(-1)?.id,
  };
}

import { integerArrayLiteral, textArrayLiteral } from '../db/array-literal';
import type { SqlExecutor } from '../db/executor';

// The inbox guard's two statements. Rows are inserted in event-id order so two overlapping
// batches (a rebalance, a replay by a second group) take their key locks in the same order and
// wait for each other instead of deadlocking.

export const INSERT_INBOX_ROWS_SQL = `
INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id, payload_hash, kafka_topic, kafka_partition, kafka_offset)
SELECT $1, t.event_id, t.payload_hash, ($7::text[])[t.topic_index + 1], t.kafka_partition, t.kafka_offset
  FROM unnest($2::text[], $3::text[], $4::integer[], $5::integer[], $6::bigint[]) AS t(event_id, payload_hash, topic_index, kafka_partition, kafka_offset)
 ORDER BY t.event_id
ON CONFLICT DO NOTHING
RETURNING event_id`;

/**
 * An event's inbox row: its id, the hash of its payload and where it sat on Kafka (offset as a
 * decimal string). The topic is an index into the batch's topics, as the batch itself carries it
 * (EventBatch.topicIndex): a batch has a few topics and thousands of rows, so each topic travels once.
 */
export interface InboxRow {
  eventId: string;
  payloadHash: string;
  topicIndex: number;
  partition: number;
  offset: string;
}

/** Inserts the rows of ids not yet processed by this consumer; returns the ids that are new. */
export async function insertInboxRows(db: SqlExecutor, consumer: string, topics: readonly string[], rows: readonly InboxRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const { rows: inserted } = await db.query<{ event_id: string }>(INSERT_INBOX_ROWS_SQL, [
    consumer,
    textArrayLiteral(rows.map((r) => r.eventId)),
    textArrayLiteral(rows.map((r) => r.payloadHash)),
    integerArrayLiteral(rows.map((r) => r.topicIndex)),
    integerArrayLiteral(rows.map((r) => r.partition)),
    integerArrayLiteral(rows.map((r) => r.offset)),
    topics,
  ]);
  return new Set(inserted.map((r) => r.event_id));
}

export const APPLIED_PAYLOAD_HASHES_SQL = `
SELECT event_id, payload_hash FROM temporal_outbox.inbox_processed_events
WHERE consumer = $1 AND event_id = ANY($2::text[]) AND payload_hash IS NOT NULL`;

/** The recorded payload hash of already-processed ids (rows without one are left out). */
export async function appliedPayloadHashes(db: SqlExecutor, consumer: string, eventIds: string[]): Promise<Map<string, string>> {
  if (eventIds.length === 0) return new Map();
  const { rows } = await db.query<{ event_id: string; payload_hash: string }>(APPLIED_PAYLOAD_HASHES_SQL, [consumer, textArrayLiteral(eventIds)]);
  return new Map(rows.map((r) => [r.event_id, r.payload_hash]));
}

export const DELETE_INBOX_ROWS_SQL = 'DELETE FROM temporal_outbox.inbox_processed_events WHERE consumer = $1 AND event_id = ANY($2::text[])';

/** Forgets ids whose events were rejected, so a redelivery after the cause is fixed applies them. */
export async function deleteInboxRows(db: SqlExecutor, consumer: string, eventIds: string[]): Promise<void> {
  if (eventIds.length > 0) await db.query(DELETE_INBOX_ROWS_SQL, [consumer, eventIds]);
}

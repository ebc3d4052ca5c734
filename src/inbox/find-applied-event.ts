import type { SqlExecutor } from '../db/executor';

/** Each inbox that applied the event, with where the event sat on Kafka (migrations/0054). */
export const FIND_APPLIED_EVENT_SQL = `
  SELECT consumer, kafka_topic, kafka_partition, kafka_offset::text AS kafka_offset, processed_at
    FROM temporal_outbox.inbox_processed_events
   WHERE event_id = $1
   ORDER BY consumer`;

export interface AppliedEvent {
  consumer: string;
  /** Null on a row written before the inbox recorded positions. */
  topic: string | null;
  partition: number | null;
  offset: number | null;
  appliedAt: Date;
}

/** The inbox rows of one event id, one per consumer that applied it. */
export async function findAppliedEvent(db: SqlExecutor, eventId: string): Promise<AppliedEvent[]> {
  const { rows } = await db.query<{ consumer: string; kafka_topic: string | null; kafka_partition: number | null; kafka_offset: string | null; processed_at: Date }>(
    FIND_APPLIED_EVENT_SQL,
    [eventId],
  );
  return rows.map((r) => ({
    consumer: r.consumer,
    topic: r.kafka_topic,
    partition: r.kafka_partition,
    offset: r.kafka_offset === null ? null : Number(r.kafka_offset),
    appliedAt: r.processed_at,
  }));
}

import type { SqlExecutor } from '../../db/executor';

/**
 * Of the event ids read from a topic ($1), those with no outbox row created since $2 and no inbox
 * row of the audited consumers ($3): after a failover with asynchronous replication, events whose
 * producer's commit was acknowledged and then lost after the relay had published them. An event
 * a consumer did apply is the other kind (applied-without-outbox.ts). The outbox is read from $2
 * on only (the window's start minus a margin: an event is created before it is published); the
 * inbox by its key.
 */
export const UNKNOWN_TOPIC_EVENTS_SQL = `
  SELECT w.event_id AS "eventId"
    FROM unnest($1::text[]) w(event_id)
   WHERE NOT EXISTS (SELECT 1 FROM temporal_outbox.outbox_events o WHERE o.payload ->> 'event_id' = w.event_id AND o.created_at >= $2::timestamptz)
     AND NOT EXISTS (SELECT 1 FROM temporal_outbox.inbox_processed_events i WHERE i.consumer = ANY($3::text[]) AND i.event_id = w.event_id)`;

export async function unknownTopicEvents(db: SqlExecutor, input: { eventIds: string[]; createdSince: string; consumers: string[] }): Promise<Set<string>> {
  if (input.eventIds.length === 0) return new Set();
  const { rows } = await db.query<{ eventId: string }>(UNKNOWN_TOPIC_EVENTS_SQL, [[...new Set(input.eventIds)], input.createdSince, input.consumers]);
  return new Set(rows.map((r) => r.eventId));
}

import type { SqlExecutor } from '../db/executor';

// Counts deliveries skipped because no handler of the consumer knows their type (a redelivery
// counts again: this is what the consumer saw, not a set of distinct events).

export const COUNT_SKIPPED_EVENTS_SQL = `
INSERT INTO temporal_outbox.inbox_skipped_event_types AS s (consumer, event_type, skipped)
SELECT $1, t.event_type, t.n FROM unnest($2::text[], $3::bigint[]) AS t(event_type, n)
ON CONFLICT (consumer, event_type) DO UPDATE SET skipped = s.skipped + excluded.skipped, last_skipped_at = now()`;

export async function countSkippedEvents(db: SqlExecutor, consumer: string, counts: Map<string, number>): Promise<void> {
  if (counts.size === 0) return;
  await db.query(COUNT_SKIPPED_EVENTS_SQL, [consumer, [...counts.keys()], [...counts.values()]]);
}

export interface SkippedEventTypeRow {
  consumer: string;
  event_type: string;
  skipped: string;
  last_skipped_at: Date;
}

export const LIST_SKIPPED_EVENT_TYPES_SQL = `
SELECT consumer, event_type, skipped::text, last_skipped_at FROM temporal_outbox.inbox_skipped_event_types
WHERE ($1::text IS NULL OR consumer = $1) ORDER BY consumer, event_type`;

export async function listSkippedEventTypes(db: SqlExecutor, consumer?: string): Promise<SkippedEventTypeRow[]> {
  return (await db.query<SkippedEventTypeRow>(LIST_SKIPPED_EVENT_TYPES_SQL, [consumer ?? null])).rows;
}

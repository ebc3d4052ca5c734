import type { SqlExecutor } from '../db/executor';

export interface ParkedEventRow {
  id: string;
  consumer: string;
  topic: string;
  kafka_partition: number;
  kafka_offset: string;
  event_id: string | null;
  reason: string;
  raw_value: string | null;
  parked_at: Date;
}

export const LIST_PARKED_EVENTS_SQL = `
SELECT id::text, consumer, topic, kafka_partition, kafka_offset::text, event_id, reason, raw_value, parked_at
FROM inbox_parked_events
WHERE ($1::text IS NULL OR consumer = $1)
ORDER BY id DESC
LIMIT $2`;

/** Newest first. */
export async function listParkedEvents(db: SqlExecutor, opts: { consumer?: string; limit: number }): Promise<ParkedEventRow[]> {
  const { rows } = await db.query<ParkedEventRow>(LIST_PARKED_EVENTS_SQL, [opts.consumer ?? null, opts.limit]);
  return rows;
}

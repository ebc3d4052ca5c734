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
  /** Whether `inbox redrive` can apply it (a handler's refusal, holding the event). */
  redrivable: boolean;
  redriven_at: Date | null;
  /** The dead-letter copy: pending (not written yet, retried), sent, failed (given up, see error); null when none is owed. */
  dead_letter_state: 'pending' | 'sent' | 'failed' | null;
  dead_letter_error: string | null;
}

export const LIST_PARKED_EVENTS_SQL = `
SELECT id::text, consumer, topic, kafka_partition, kafka_offset::text, event_id, reason, raw_value, parked_at,
       event_type IS NOT NULL AS redrivable, redriven_at, dead_letter_state, dead_letter_error
FROM temporal_outbox.inbox_parked_events
WHERE ($1::text IS NULL OR consumer = $1)
ORDER BY id DESC
LIMIT $2`;

/** Newest first. */
export async function listParkedEvents(db: SqlExecutor, opts: { consumer?: string; limit: number }): Promise<ParkedEventRow[]> {
  const { rows } = await db.query<ParkedEventRow>(LIST_PARKED_EVENTS_SQL, [opts.consumer ?? null, opts.limit]);
  return rows;
}

import type { SqlExecutor } from '../../db/executor';
import type { AppliedWithoutOutboxRow } from '../types';

/**
 * Inbox rows of the consumer applied in [$2, $3) whose event has no outbox row: the producer's
 * transaction was lost (a failover with asynchronous replication) while its message was not, and
 * a consumer applied it. Outbox rows are looked for from $2 minus a margin ($4 ms: an event is
 * created before it is applied); the outbox's event id has no index, so this reads that part of
 * the outbox once (a hash anti-join). The count is exact; the rows listed are the first $5 by
 * time applied (all of them when $5 is null).
 */
export const APPLIED_WITHOUT_OUTBOX_SQL = `
  SELECT i.event_id AS "eventId", i.processed_at AS "processedAt", count(*) OVER ()::int AS total
    FROM temporal_outbox.inbox_processed_events i
   WHERE i.consumer = $1
     AND i.processed_at >= $2::timestamptz AND i.processed_at < $3::timestamptz
     AND NOT EXISTS (SELECT 1 FROM temporal_outbox.outbox_events o
                      WHERE o.payload ->> 'event_id' = i.event_id
                        AND o.created_at >= $2::timestamptz - make_interval(secs => $4::float8 / 1000))
   ORDER BY i.processed_at, i.event_id
   LIMIT $5`;

export interface AppliedWithoutOutboxInput {
  consumer: string;
  from: string;
  to: string;
  /** How long before `from` an applied event's outbox row may have been created. */
  createdBeforeMarginMs: number;
  /** null: every one. */
  maxListed: number | null;
}

export async function appliedWithoutOutboxRow(db: SqlExecutor, input: AppliedWithoutOutboxInput): Promise<{ count: number; listed: AppliedWithoutOutboxRow[] }> {
  const { rows } = await db.query<{ eventId: string; processedAt: Date; total: number }>(APPLIED_WITHOUT_OUTBOX_SQL, [input.consumer, input.from, input.to, input.createdBeforeMarginMs, input.maxListed]);
  return { count: rows[0]?.total ?? 0, listed: rows.map((r) => ({ consumer: input.consumer, eventId: r.eventId, processedAt: r.processedAt.toISOString() })) };
}

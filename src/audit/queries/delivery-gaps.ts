import type { SqlExecutor } from '../../db/executor';

/**
 * For one consumer: every published event of its types created in the window, matched with its
 * inbox row and, when it has none, the reason it was parked. Each event falls in one kind:
 *   applied      inbox row                                   — fine
 *   parked       no inbox row, parked with a reason          — fine
 *   not-applied  no inbox row, not parked                    — drift (lost)
 * The inbox's primary key (consumer, event_id) is what makes "applied" mean exactly once. What
 * a handler did with an event is its service's to prove, with a check of its own (check.ts).
 * Counts are exact; the listed events are the first $5 of each kind by outbox id.
 */
export const DELIVERY_GAPS_SQL = `
  WITH expected AS (
    SELECT o.id, o.published_at, o.payload ->> 'event_id' AS event_id
      FROM temporal_outbox.outbox_events o
     WHERE o.created_at >= $2::timestamptz AND o.created_at < $3::timestamptz
       AND o.published_at IS NOT NULL
       AND o.event_type = ANY($4::text[])
  ),
  joined AS (
    SELECT e.*, i.event_id IS NOT NULL AS in_inbox
      FROM expected e
      LEFT JOIN temporal_outbox.inbox_processed_events i ON i.consumer = $1 AND i.event_id = e.event_id
  ),
  classified AS (
    SELECT j.*, p.reason AS parked_reason,
           CASE
             WHEN j.in_inbox THEN 'applied'
             WHEN p.reason IS NOT NULL THEN 'parked'
             ELSE 'not-applied'
           END AS kind
      FROM joined j
      LEFT JOIN LATERAL (
        SELECT reason FROM temporal_outbox.inbox_parked_events p WHERE p.consumer = $1 AND p.event_id = j.event_id ORDER BY p.id DESC LIMIT 1
      ) p ON NOT j.in_inbox
  ),
  ranked AS (
    SELECT c.*, row_number() OVER (PARTITION BY kind ORDER BY id) AS n, count(*) OVER (PARTITION BY kind) AS kind_count FROM classified c
  )
  SELECT kind, kind_count::int AS count,
         json_agg(json_build_object('outboxId', id, 'eventId', event_id, 'publishedAt', published_at, 'reason', parked_reason) ORDER BY id)
           FILTER (WHERE n <= $5 AND kind <> 'applied') AS listed
    FROM ranked
   GROUP BY kind, kind_count`;

export type DeliveryKind = 'applied' | 'parked' | 'not-applied';

export interface DeliveryGapRow {
  outboxId: number;
  eventId: string;
  publishedAt: string;
  reason: string | null;
}

export interface DeliveryGapsInput {
  consumer: string;
  eventTypes: string[];
  from: string;
  to: string;
  maxListed: number;
}

export async function deliveryGaps(db: SqlExecutor, input: DeliveryGapsInput): Promise<Record<DeliveryKind, { count: number; listed: DeliveryGapRow[] }>> {
  const { rows } = await db.query<{ kind: DeliveryKind; count: number; listed: DeliveryGapRow[] | null }>(DELIVERY_GAPS_SQL, [
    input.consumer,
    input.from,
    input.to,
    input.eventTypes,
    input.maxListed,
  ]);
  const empty = () => ({ count: 0, listed: [] as DeliveryGapRow[] });
  const out = { applied: empty(), parked: empty(), 'not-applied': empty() };
  for (const r of rows) out[r.kind] = { count: r.count, listed: r.listed ?? [] };
  return out;
}

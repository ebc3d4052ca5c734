import type { SqlExecutor } from 'temporal-outbox';

/**
 * For one consumer, the credits its ledger holds for events published in the window, matched
 * with the event and the consumer's inbox row. Two kinds of drift, disjoint:
 *   inboxRowMissing  credited, but no inbox row: a redelivery would credit it again
 *   appliedDiffers   credited to another account or with another amount than published
 * The core audit proves each event reached the inbox once; this proves what the handler did.
 * Counts are exact; the listed credits are the first $6 of the kind by outbox id.
 */
export const LEDGER_GAPS_SQL = `
  WITH credited AS (
    SELECT o.id, o.payload ->> 'event_id' AS event_id, o.payload ->> 'account_id' AS account_id, o.payload ->> 'amount' AS amount,
           l.account_id::text AS applied_account, l.amount::text AS applied_amount, i.event_id IS NOT NULL AS in_inbox
      FROM temporal_outbox.outbox_events o
      JOIN payments_credit_ledger l ON l.consumer = $1 AND l.event_id = o.payload ->> 'event_id'
      LEFT JOIN temporal_outbox.inbox_processed_events i ON i.consumer = $1 AND i.event_id = l.event_id
     WHERE o.created_at >= $2::timestamptz AND o.created_at < $3::timestamptz
       AND o.published_at IS NOT NULL
       AND o.event_type = ANY($4::text[])
  ),
  classified AS (
    SELECT c.*,
           CASE WHEN NOT c.in_inbox THEN 'inboxRowMissing'
                WHEN c.applied_account IS DISTINCT FROM c.account_id OR c.applied_amount IS DISTINCT FROM c.amount THEN 'appliedDiffers'
           END AS kind
      FROM credited c
  )
  SELECT (SELECT count(*) FROM classified)::int AS checked,
         (SELECT count(*) FROM classified WHERE kind = $5)::int AS found,
         coalesce((SELECT json_agg(json_build_object('eventId', event_id, 'accountId', account_id, 'amount', amount,
                                                     'appliedAccountId', applied_account, 'appliedAmount', applied_amount) ORDER BY id)
                     FROM (SELECT * FROM classified WHERE kind = $5 ORDER BY id LIMIT $6::int) m), '[]'::json) AS listed`;

export type LedgerGapKind = 'inboxRowMissing' | 'appliedDiffers';

export interface LedgerGapRow {
  eventId: string;
  accountId: string | null;
  amount: string | null;
  appliedAccountId: string;
  appliedAmount: string;
}

export interface LedgerGapsInput {
  consumer: string;
  eventTypes: string[];
  from: string;
  to: string;
  kind: LedgerGapKind;
  maxListed: number;
}

export async function ledgerGaps(db: SqlExecutor, input: LedgerGapsInput): Promise<{ checked: number; found: number; listed: LedgerGapRow[] }> {
  const { rows } = await db.query<{ checked: number; found: number; listed: LedgerGapRow[] }>(LEDGER_GAPS_SQL, [
    input.consumer,
    input.from,
    input.to,
    input.eventTypes,
    input.kind,
    input.maxListed,
  ]);
  return rows[0]!;
}

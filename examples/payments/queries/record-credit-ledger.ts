import type { SqlExecutor } from 'temporal-outbox';

// The credits' lines in payments_credit_ledger (what the reconciliation audit sums), written in
// the handler's transaction, after the inbox row and beside the balance update: a credit is
// in the ledger exactly when it moved a balance. Amounts are decimal strings (bigint).

export interface CreditLedgerRow {
  eventId: string;
  accountId: string;
  amount: string;
}

export const RECORD_CREDIT_LEDGER_SQL = `
INSERT INTO payments_credit_ledger (consumer, event_id, account_id, amount)
SELECT $1, t.event_id, t.account_id, t.amount
FROM unnest($2::text[], $3::bigint[], $4::bigint[]) AS t(event_id, account_id, amount)`;

export async function recordCreditLedger(db: SqlExecutor, consumer: string, rows: CreditLedgerRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.query(RECORD_CREDIT_LEDGER_SQL, [
    consumer,
    rows.map((r) => r.eventId),
    rows.map((r) => r.accountId),
    rows.map((r) => r.amount),
  ]);
}

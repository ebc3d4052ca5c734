import type { SqlExecutor } from 'temporal-outbox';

// The one-event credit (the handler's path when a set-based batch had to be split to find the
// event that spoiled it); the batch path is credit-accounts-with-ledger.ts.

export const CREDIT_ACCOUNT_SQL = 'UPDATE accounts SET balance = balance + $2::bigint, updated_at = now() WHERE account_id = $1::bigint';

/** Credits one account; false when it does not exist. */
export async function creditAccount(db: SqlExecutor, accountId: string, amount: string): Promise<boolean> {
  const result = await db.query(CREDIT_ACCOUNT_SQL, [accountId, amount]);
  return (result.rowCount ?? 0) > 0;
}

import type { SqlExecutor } from '../../db/executor';

// The set-based credit: one UPDATE per batch, one row change per account however many of its
// events the batch holds. Runs after the inbox guard inserted the events' inbox rows, so every
// event given here is new for this consumer.

export const CREDIT_ACCOUNTS_SQL = `
WITH totals AS (
  SELECT t.account_id, sum(t.amount)::bigint AS total
  FROM unnest($1::bigint[], $2::bigint[]) AS t(account_id, amount)
  GROUP BY t.account_id
)
UPDATE accounts a SET balance = a.balance + totals.total, updated_at = now()
FROM totals WHERE a.account_id = totals.account_id
RETURNING a.account_id::text`;

/** Credits the accounts that exist; returns the ids of those credited (the others are unknown). */
export async function creditAccounts(db: SqlExecutor, accountIds: string[], amounts: string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ account_id: string }>(CREDIT_ACCOUNTS_SQL, [accountIds, amounts]);
  return new Set(rows.map((r) => r.account_id));
}

export const CREDIT_ACCOUNT_SQL = 'UPDATE accounts SET balance = balance + $2::bigint, updated_at = now() WHERE account_id = $1::bigint';

/** Credits one account; false when it does not exist. */
export async function creditAccount(db: SqlExecutor, accountId: string, amount: string): Promise<boolean> {
  const result = await db.query(CREDIT_ACCOUNT_SQL, [accountId, amount]);
  return (result.rowCount ?? 0) > 0;
}

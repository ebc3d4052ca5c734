import type { SqlExecutor } from 'temporal-outbox';

/**
 * The credit handler's invariant: each balance equals its opening balance plus the sum of the
 * credits applied to it (payments_credit_ledger, written in the same statement as the credit).
 * One snapshot sees a credit's balance change and its ledger row together or neither, so credits
 * landing while this runs never show as drift. Reads every account and the ledger's per-account
 * sums (one pass over the ledger's account index).
 */
export const BALANCE_MISMATCHES_SQL = `
  WITH sums AS (
    SELECT account_id, sum(amount) AS credited FROM payments_credit_ledger GROUP BY account_id
  ),
  checked AS (
    SELECT a.account_id, a.balance, a.opening_balance + coalesce(s.credited, 0) AS expected
      FROM accounts a LEFT JOIN sums s USING (account_id)
  )
  SELECT (SELECT count(*) FROM checked)::int AS accounts,
         (SELECT count(*) FROM checked WHERE balance <> expected)::int AS mismatched,
         coalesce((SELECT json_agg(json_build_object('accountId', account_id::text, 'balance', balance::text, 'expected', expected::text,
                                                     'difference', (balance - expected)::text) ORDER BY account_id)
                     FROM (SELECT * FROM checked WHERE balance <> expected ORDER BY account_id LIMIT $1::int) m), '[]'::json) AS listed`;

export interface BalanceMismatchRow {
  accountId: string;
  balance: string;
  expected: string;
  difference: string;
}

export async function balanceMismatches(db: SqlExecutor, maxListed: number): Promise<{ accounts: number; mismatched: number; listed: BalanceMismatchRow[] }> {
  const { rows } = await db.query<{ accounts: number; mismatched: number; listed: BalanceMismatchRow[] }>(BALANCE_MISMATCHES_SQL, [maxListed]);
  return rows[0]!;
}

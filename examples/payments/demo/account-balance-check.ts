import type { SqlExecutor } from 'temporal-outbox';

/**
 * Accounts whose balance is not exactly the sum of their confirmed payments. A total that adds
 * up can still hide one account credited twice and another not at all; this cannot.
 */
const MISMATCHED_ACCOUNTS_SQL = `
  SELECT coalesce(a.account_id, p.account_id) AS account_id,
         coalesce(a.balance, 0)                AS balance,
         coalesce(p.confirmed, 0)              AS confirmed
    FROM accounts AS a
    FULL JOIN (SELECT account_id, sum(amount) AS confirmed
                 FROM payments WHERE status = 'confirmed'
                GROUP BY account_id) AS p USING (account_id)
   WHERE coalesce(a.balance, 0) <> coalesce(p.confirmed, 0)
   ORDER BY 1`;

export interface AccountMismatch {
  accountId: string;
  balance: bigint;
  confirmed: bigint;
}

export async function mismatchedAccounts(db: SqlExecutor): Promise<AccountMismatch[]> {
  const { rows } = await db.query<{ account_id: string; balance: string; confirmed: string }>(MISMATCHED_ACCOUNTS_SQL);
  return rows.map((r) => ({ accountId: String(r.account_id), balance: BigInt(r.balance), confirmed: BigInt(r.confirmed) }));
}

export async function countAccountsWithPayments(db: SqlExecutor): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(DISTINCT account_id)::int AS n FROM payments WHERE status = 'confirmed'`);
  return rows[0]!.n;
}

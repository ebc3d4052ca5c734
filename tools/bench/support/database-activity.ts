/**
 * Transactions the pool's database has committed so far (pg_stat_database). Every statement
 * outside BEGIN … COMMIT counts as one, so the difference over a run counts the relay's polls and
 * probes as well as the producer's and consumer's writes. Backends report their counts when they
 * go idle, at most once a second, so a run's figure is off by about a second's worth at each end.
 */
export async function committedTransactions(pool: { query(sql: string): Promise<{ rows: { n: string }[] }> }): Promise<number> {
  const { rows } = await pool.query('SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = current_database()');
  return Number(rows[0]!.n);
}

import type { SqlExecutor } from '../../db/executor';

/**
 * Planner settings for the relay's poll and backlog count, pinning them to the pending index.
 *
 * Why: the planner cannot estimate the shard filter `(shard_hash & 2147483647) % $1 = $2` (no
 * statistics on the expression; it guesses 0.5 % of rows where a shard holds 1/N). With a large
 * backlog pending (a catch-up after an outage, a benchmark's burst) it then believes an ordered
 * walk of the index would read the whole index to find one batch, and picks a parallel
 * sequential scan of the table and a sort instead, ten times slower than the index walk on every
 * poll of every shard (docs/measurements/relay-log.md, "Full speed"). ANALYZE does not change the
 * guess. With these off the planner has one sensible path left: the index, in id order, stopping at
 * the batch size. A table without the pending index still gets a plan without it (disabling a path
 * only makes it look expensive), which `npx temporal-outbox doctor` reports.
 *
 * JIT off as well: "looks expensive" is a cost of 10^10 added to a disabled path, and a plan that
 * must keep one (the session's layout read, a sequential scan of a one-row table) then passes
 * every jit_*_above_cost threshold. PostgreSQL compiled that read with LLVM on every layout check,
 * far longer than the read itself, and sessions starting together after an idle pause made the
 * burst's events wait for it (docs/measurements/relay-log.md, "Waking from idle", and
 * "Figures behind code comments"). Nothing a session runs is long enough for JIT to pay off.
 */
export const POLL_PLAN_SETTINGS = {
  enable_seqscan: 'off',
  enable_bitmapscan: 'off',
  max_parallel_workers_per_gather: '0',
  jit: 'off',
} as const;

const PIN_POLL_PLAN_SQL = `SELECT ${Object.keys(POLL_PLAN_SETTINGS)
  .map((name, i) => `set_config('${name}', $${i + 2}::text, $1::boolean)`)
  .join(', ')}`;

/**
 * Applies POLL_PLAN_SETTINGS to this connection: for the rest of its session (a relay session's
 * own connection, which runs only polls, counts and its lock), or until the current transaction
 * ends (`transaction`, e.g. the doctor's EXPLAIN of the poll).
 */
export async function pinPollPlan(db: SqlExecutor, scope: 'session' | 'transaction' = 'session'): Promise<void> {
  await db.query(PIN_POLL_PLAN_SQL, [scope === 'transaction', ...Object.values(POLL_PLAN_SETTINGS)]);
}

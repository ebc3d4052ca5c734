import type { Pool } from 'pg';
import { offerLoad } from './offered-load';

// The pipeline benchmarks' load: payment_confirmed events inserted in plain SQL at a steady rate,
// their ids tagged per run (pipeline-stages.ts runLatency reads a run's events by its tag), and
// the wait until the consumer has credited every one.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `rate` events/s for `seconds`, 10 per transaction, each crediting 100 to one of `accounts` accounts; returns how many. */
export async function offerCredits(pool: Pool, opts: { rate: number; seconds: number; tag: string; accounts: number }): Promise<number> {
  const { total } = await offerLoad({
    rate: opts.rate,
    seconds: opts.seconds,
    commit: (ids) =>
      pool.query(
        `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
         SELECT 'payment_confirmed', jsonb_build_object('event_id', $2::text || '-' || e, 'type', 'payment_confirmed', 'account_id', 1 + abs(hashtext(e)) % $3::int, 'amount', 100)
           FROM unnest($1::text[]) AS e`,
        [ids, opts.tag, opts.accounts],
      ),
  });
  return total;
}

/** Polls until the inbox holds `expected` rows. */
export async function waitCredited(pool: Pool, expected: number, timeoutMs = 180_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events');
    if (rows[0]!.n >= expected) return;
    await sleep(250);
  }
  throw new Error(`pipeline did not drain in ${timeoutMs / 1000} s`);
}

import type { TestDatabase } from '../../testkit/database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Commits n outbox rows in 10,000-row transactions, as a busy application would: the relays,
 * already running, wake on each commit's NOTIFY and drain while the rest is still arriving.
 */
export async function insertBacklog(db: TestDatabase, n: number): Promise<void> {
  for (let from = 1; from <= n; from += 10_000) {
    await db.pool.query(
      `INSERT INTO outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', md5(random()::text || g), 'type', 'payment_confirmed', 'account_id', g % 1000, 'amount', 100)
         FROM generate_series($1::int, $2::int) g`,
      [from, Math.min(n, from + 9_999)],
    );
  }
}

const pendingCount = async (db: TestDatabase) => Number((await db.pool.query(`SELECT count(*) AS n FROM outbox_events WHERE published_at IS NULL`)).rows[0].n);

/** Polls until no row is pending; `what` names the run in the timeout error. */
export async function waitDrained(db: TestDatabase, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await pendingCount(db)) > 0) {
    if (Date.now() > deadline) throw new Error(`${what}: not drained in ${timeoutMs} ms`);
    await sleep(25);
  }
}

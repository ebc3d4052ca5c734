import type { TestDatabase } from '../../../test/kit/database';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Commits n outbox rows in 10,000-row transactions, as a busy application would: the relays,
 * already running, wake on each commit's NOTIFY and drain while the rest is still arriving.
 */
export async function insertBacklog(db: TestDatabase, n: number): Promise<void> {
  for (let from = 1; from <= n; from += 10_000) {
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', md5(random()::text || g), 'type', 'payment_confirmed', 'account_id', g % 1000, 'amount', 100)
         FROM generate_series($1::int, $2::int) g`,
      [from, Math.min(n, from + 9_999)],
    );
  }
}

/**
 * Whether any row is left for the relay: the first entry of the pending partial index, the
 * relay's own predicate. The benchmark asks this every 25 ms of a run on the PostgreSQL it
 * measures, so it must cost next to nothing: a `count(*) … WHERE published_at IS NULL` here (the
 * predicate does not match the partial index) was a sequential scan of the whole table each time,
 * 20 a second: 64.6 against 22 million rows read in a probe of three 200,000-event runs, on the
 * PostgreSQL whose time the relay's figure depends on (docs/measurements/relay-log.md, "Full speed").
 */
const anyPending = async (db: TestDatabase) =>
  (await db.pool.query<{ pending: boolean }>(`SELECT EXISTS (SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL) AS pending`)).rows[0]!.pending;

/** Polls until no row is left for the relay (parked rows are not); `what` names the run in the timeout error. */
export async function waitDrained(db: TestDatabase, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (await anyPending(db)) {
    if (Date.now() > deadline) throw new Error(`${what}: not drained in ${timeoutMs} ms`);
    await sleep(25);
  }
}

/** The highest outbox id so far (0 when empty): rows committed after it are the next run's. */
export async function maxOutboxId(db: TestDatabase): Promise<number> {
  return Number((await db.pool.query(`SELECT coalesce(max(id), 0) AS id FROM temporal_outbox.outbox_events`)).rows[0].id);
}

/**
 * Rows per shard among those with id > afterId, by the relay's own shard filter
 * (src/outbox/queries/fetch-pending-ids.ts): a shard relays only its keys' rows, so this is each
 * shard's share of a run's work.
 */
export async function eventsPerShardSince(db: TestDatabase, shardCount: number, afterId: number): Promise<number[]> {
  const { rows } = await db.pool.query<{ shard: number; n: number }>(
    `SELECT (shard_hash & 2147483647) % $1::int AS shard, count(*)::int AS n FROM temporal_outbox.outbox_events WHERE id > $2::bigint GROUP BY 1`,
    [shardCount, afterId],
  );
  const perShard = Array.from({ length: shardCount }, () => 0);
  for (const r of rows) perShard[r.shard] = r.n;
  return perShard;
}

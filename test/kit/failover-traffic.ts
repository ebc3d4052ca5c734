import type { Pool } from 'pg';

// Plain-SQL producer traffic for the failover tests, which must know exactly which commits were
// acknowledged (a failover may take acknowledged commits with it), and the tally they end with.

export interface CreditEvent {
  event_id: string;
  type: 'payment_confirmed';
  account_id: number;
  amount: 1;
}

/** `n` credit events of 1 spread over `accounts`, ids `${prefix}-0` ... */
export function creditEvents(prefix: string, n: number, accounts: number[]): CreditEvent[] {
  return Array.from({ length: n }, (_, i) => ({ event_id: `${prefix}-${i}`, type: 'payment_confirmed', account_id: accounts[i % accounts.length]!, amount: 1 }));
}

/** One producer transaction inserting the events as a producer in any language does: event_type and payload only. */
export async function insertEvents(pool: Pool, events: CreditEvent[]): Promise<void> {
  await pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) SELECT 'payment_confirmed', e FROM jsonb_array_elements($1::jsonb) e`, [JSON.stringify(events)]);
}

export interface SteadyTraffic {
  /** Events whose transaction's COMMIT was acknowledged. */
  readonly acknowledged: CreditEvent[];
  /** Transactions that failed (connection lost, server gone): their fate is unknown to the producer. */
  readonly failed: number;
  stop(): Promise<void>;
}

/**
 * A transaction of `perTransaction` events every `everyMs`, until stopped; a failed one is not
 * retried (its ids are not reused: an unacknowledged COMMIT may still have happened).
 */
export function steadyTraffic(pool: Pool, opts: { prefix: string; accounts: number[]; everyMs: number; perTransaction: number }): SteadyTraffic {
  const acknowledged: CreditEvent[] = [];
  let failed = 0;
  let running = true;
  const loop = (async () => {
    for (let tx = 0; running; tx++) {
      const events = creditEvents(`${opts.prefix}-${tx}`, opts.perTransaction, opts.accounts).map((e, k) => ({ ...e, account_id: opts.accounts[(tx * opts.perTransaction + k) % opts.accounts.length]! }));
      try {
        await insertEvents(pool, events);
        acknowledged.push(...events);
      } catch {
        failed++;
      }
      await new Promise((r) => setTimeout(r, opts.everyMs));
    }
  })();
  return {
    acknowledged,
    get failed() {
      return failed;
    },
    async stop() {
      running = false;
      await loop;
    },
  };
}

export interface FailoverTally {
  /** Outbox rows in the database. */
  outboxRows: number;
  /** Of `expected`, events with no outbox row. */
  missingOutboxRows: string[];
  /** Of `expected`, events with no inbox row of the consumer. */
  lost: string[];
  /** Credits beyond one per expected event, summed over accounts (every credit is 1). */
  doubleApplied: number;
  /** Accounts credited less than their expected events. */
  underApplied: number;
}

/**
 * Holds the database to `expected`, the events that must each be applied exactly once: each has
 * an inbox row, and each account's balance moved by exactly its number of expected events.
 */
export async function tallyFailover(pool: Pool, consumer: string, expected: CreditEvent[]): Promise<FailoverTally> {
  const ids = expected.map((e) => e.event_id);
  const { rows: [counts] } = await pool.query<{ outbox_rows: number; missing: string[]; lost: string[] }>(
    `SELECT (SELECT count(*)::int FROM temporal_outbox.outbox_events) AS outbox_rows,
            coalesce((SELECT array_agg(w.event_id) FROM unnest($1::text[]) w(event_id) WHERE NOT EXISTS (SELECT 1 FROM temporal_outbox.outbox_events o WHERE o.payload ->> 'event_id' = w.event_id)), '{}') AS missing,
            coalesce((SELECT array_agg(w.event_id) FROM unnest($1::text[]) w(event_id) WHERE NOT EXISTS (SELECT 1 FROM temporal_outbox.inbox_processed_events i WHERE i.consumer = $2 AND i.event_id = w.event_id)), '{}') AS lost`,
    [ids, consumer],
  );
  const perAccount = new Map<number, number>();
  for (const e of expected) perAccount.set(e.account_id, (perAccount.get(e.account_id) ?? 0) + 1);
  const { rows: accounts } = await pool.query<{ account_id: string; moved: string }>(`SELECT account_id, balance - opening_balance AS moved FROM accounts`);
  let doubleApplied = 0;
  let underApplied = 0;
  for (const a of accounts) {
    const difference = Number(a.moved) - (perAccount.get(Number(a.account_id)) ?? 0);
    if (difference > 0) doubleApplied += difference;
    if (difference < 0) underApplied++;
  }
  return { outboxRows: counts!.outbox_rows, missingOutboxRows: counts!.missing, lost: counts!.lost, doubleApplied, underApplied };
}

import type { Pool } from 'pg';
import { PAYMENT_CONFIRMED } from '../../examples/payments/event-types';
import { enqueue } from '../../src/outbox/enqueue';

export type ProducerKind = 'api' | 'sql';

export interface Producer {
  kind: ProducerKind;
  /** Transactions whose COMMIT was acknowledged; the outbox table, not this, is the record. */
  acknowledged: number;
  /** Transactions that failed (an outage); their events were not committed, or their COMMIT's fate is unknown. */
  failed: number;
  stop(): Promise<void>;
}

const EVENTS_PER_TRANSACTION = 5;

/**
 * Writes `total` credit events at a steady pace over `seconds`, five per transaction, through the
 * public write API (`enqueue`, the way a service does) or as plain SQL (the way a producer in
 * another language does), and keeps going through outages: a failed transaction is retried with
 * new event ids after a pause, never counted. Every credit is 1, so an account's balance is the
 * number of distinct events applied to it and any double application shows as an excess.
 */
export function startProducer(kind: ProducerKind, pool: Pool, opts: { total: number; seconds: number; accounts: number[] }): Producer {
  let running = true;
  const state: Producer = { kind, acknowledged: 0, failed: 0, stop: async () => { running = false; await loop; } };
  const transactions = Math.ceil(opts.total / EVENTS_PER_TRANSACTION);
  const everyMs = (opts.seconds * 1000) / transactions;
  const loop = (async () => {
    const start = Date.now();
    let attempt = 0;
    for (let tx = 0; running && tx < transactions; attempt++) {
      const due = start + tx * everyMs;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      const events = Array.from({ length: EVENTS_PER_TRANSACTION }, (_, k) => ({
        event_id: `soak-${kind}-${attempt}-${k}`,
        type: PAYMENT_CONFIRMED,
        account_id: opts.accounts[(attempt * EVENTS_PER_TRANSACTION + k) % opts.accounts.length]!,
        amount: 1,
      }));
      try {
        await writeTransaction(kind, pool, events);
        state.acknowledged++;
        tx++;
      } catch {
        state.failed++;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  })();
  return state;
}

async function writeTransaction(kind: ProducerKind, pool: Pool, events: Record<string, unknown>[]) {
  const client = await pool.connect();
  // A crash of PostgreSQL between two statements surfaces here as an 'error' event; the failing
  // query reports it too, so the event itself only needs a listener (else Node exits).
  const ignore = () => undefined;
  client.on('error', ignore);
  try {
    await client.query('BEGIN');
    if (kind === 'api') {
      for (const payload of events) await enqueue(client, { eventType: PAYMENT_CONFIRMED, payload, key: String(payload.account_id) });
    } else {
      await client.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) SELECT $1, e FROM jsonb_array_elements($2::jsonb) e`, [PAYMENT_CONFIRMED, JSON.stringify(events)]);
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.off('error', ignore);
    // Not given back to the pool: a connection may have seen an outage, and opening one is cheap next to a soak.
    client.release(true);
  }
}

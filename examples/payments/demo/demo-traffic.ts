import crypto from 'node:crypto';
import type { Pool } from 'pg';
import { inTransaction } from 'temporal-outbox';
import { confirmPayment } from '../confirm-payment';
import { createPayment } from '../create-payment';

export const DEMO_ACCOUNT_IDS = Array.from({ length: 20 }, (_, i) => 1001 + i);

/** The demo's accounts exist before the first credit (consumers park credits to unknown accounts). */
export async function ensureDemoAccounts(pool: Pool): Promise<void> {
  await pool.query('INSERT INTO accounts (account_id) SELECT unnest($1::bigint[]) ON CONFLICT DO NOTHING', [DEMO_ACCOUNT_IDS]);
}

/**
 * Demo producer: creates a payment, then confirms it — the confirmation and its
 * payment_confirmed outbox row commit in one transaction, as the payments service does.
 */
export async function confirmOneDemoPayment(pool: Pool): Promise<void> {
  const paymentId = `pay_${crypto.randomUUID()}`;
  const accountId = DEMO_ACCOUNT_IDS[crypto.randomInt(DEMO_ACCOUNT_IDS.length)]!;
  const amount = crypto.randomInt(1, 100_00); // minor units: up to 99.99
  await createPayment(pool, { paymentId, accountId, amount });
  await inTransaction(pool, (client) => confirmPayment(client, { paymentId }));
}

/** Runs `tick` at about `perSecond` calls a second until `signal` aborts; returns how many ran. */
export async function runAtRate(perSecond: number, signal: AbortSignal, tick: () => Promise<void>): Promise<number> {
  let done = 0;
  const started = Date.now();
  while (!signal.aborted) {
    const due = Math.floor(((Date.now() - started) / 1000) * perSecond);
    const burst = Math.min(due - done, 50);
    if (burst > 0) {
      await Promise.all(Array.from({ length: burst }, tick));
      done += burst;
    } else {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  return done;
}

import { enqueue, type SqlExecutor } from 'temporal-outbox';
import { PaymentConfirmed } from './event-types';
import { assertPaymentId } from './validate';

export type ConfirmPaymentResult =
  | { confirmed: true; eventId: string; outboxId: number }
  | { confirmed: false; reason: 'not_found' | 'already_confirmed' };

/** Flips pending → confirmed; the row lock it takes also serialises two confirmations of one payment. */
const CONFIRM_SQL = `
  UPDATE payments
     SET status = 'confirmed', confirmed_at = now()
   WHERE payment_id = $1 AND status = 'pending'
  RETURNING account_id, amount`;

const EXISTS_SQL = `SELECT 1 FROM payments WHERE payment_id = $1`;

/**
 * Confirms a payment and enqueues `payment_confirmed` with the same executor. Pass a client in
 * a transaction (BEGIN … COMMIT, or src/db/pool.ts inTransaction): both writes commit together, and
 * a rollback leaves neither the status change nor the event.
 */
export async function confirmPayment(db: SqlExecutor, input: { paymentId: string }): Promise<ConfirmPaymentResult> {
  assertPaymentId(input.paymentId);
  const { rows } = await db.query<{ account_id: string; amount: string }>(CONFIRM_SQL, [input.paymentId]);
  const row = rows[0];
  if (!row) {
    const found = await db.query(EXISTS_SQL, [input.paymentId]);
    return { confirmed: false, reason: found.rowCount === 0 ? 'not_found' : 'already_confirmed' };
  }
  const accountId = Number(row.account_id);
  // Typed: the compiler checks the payload against the type's schema; the key is the account (event-types.ts).
  const { id, eventId } = await enqueue(db, PaymentConfirmed, { account_id: accountId, amount: Number(row.amount) });
  return { confirmed: true, eventId, outboxId: id };
}

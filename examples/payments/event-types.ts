import { z } from 'zod';
import { defineEvent, quoteValue as quote } from 'temporal-outbox';

/** The event type the payments example emits and its consumer applies. */
export const PAYMENT_CONFIRMED = 'payment_confirmed';

// The messages name what is wrong with the field; the reason a bad event is parked with reads
// "payment_confirmed v1: amount: must be a positive safe integer in minor units (got 12.5)".
const accountIdError = (issue: { input?: unknown }) =>
  issue.input === undefined ? 'missing' : `must be a positive integer, a number or a string of digits (got ${quote(issue.input)})`;
const amountError = (issue: { input?: unknown }) => (issue.input === undefined ? 'missing' : `must be a positive safe integer in minor units (got ${quote(issue.input)})`);

/**
 * `payment_confirmed`: a credit of `amount` minor units to `account_id`. Account ids beyond 2^53
 * travel as strings of digits; the handler receives every id as a string (exact for bigint).
 * Keyed by account, so one account's credits stay in order.
 */
export const PaymentConfirmed = defineEvent({
  type: PAYMENT_CONFIRMED,
  schema: z.object({
    account_id: z
      .union([z.int({ error: accountIdError }).positive({ error: accountIdError }), z.string().regex(/^[1-9][0-9]{0,18}$/, { error: accountIdError })], { error: accountIdError })
      .transform(String),
    amount: z.int({ error: amountError }).positive({ error: amountError }),
  }),
  key: (p) => String(p.account_id),
  description: 'A confirmed payment: credit the account by the amount, in minor units.',
});

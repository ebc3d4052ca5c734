import { defineEventHandler, type EventData, type EventHandler, type InboxEvent, type Validation } from 'temporal-outbox';
import { PaymentConfirmed } from './event-types';
import { creditAccount } from './queries/credit-accounts';
import { creditAccountsWithLedger } from './queries/credit-accounts-with-ledger';
import { recordCreditLedger, type CreditLedgerRow } from './queries/record-credit-ledger';

/** Why a credit to an account that does not exist is parked (creating the account and re-driving it credits it once). */
export const UNKNOWN_ACCOUNT_REASON = 'unknown account';

/** A credit as the handler receives it: the schema's output (account id as a decimal string). */
export type CreditData = EventData<typeof PaymentConfirmed.schema>;

export interface CreditLimits {
  /** Largest credit accepted, in minor units; anything above is "absurd" and parked. */
  maxCreditAmount: number;
}

const BIGINT_MAX = 9223372036854775807n;

/**
 * The consumer's own rules on top of the type's schema: the accounts table's bigint range and
 * this consumer's largest credit (a setting, so not part of the type).
 */
export function checkCredit(data: CreditData, limits: CreditLimits): Validation<CreditData> {
  if (BigInt(data.account_id) > BIGINT_MAX) return { ok: false, reason: `account id ${data.account_id} is beyond the largest bigint` };
  if (data.amount > limits.maxCreditAmount) return { ok: false, reason: `amount ${data.amount} exceeds the maximum credit of ${limits.maxCreditAmount}` };
  return { ok: true, data };
}

/**
 * The worked example: `payment_confirmed` credits `accounts.balance` by `amount` (minor units),
 * exactly once per consumer. Its validate is the type's schema (event-types.ts), then
 * checkCredit. The batch path credits a whole batch in one statement. Every applied credit also
 * gets its line in payments_credit_ledger, in the same transaction (the reconciliation audit
 * checks balance = opening balance + ledgered credits).
 */
export function paymentConfirmedHandler(limits: CreditLimits): EventHandler<CreditData> {
  return defineEventHandler(PaymentConfirmed, {
    check: (data) => checkCredit(data, limits),
    async apply(tx, event, ctx) {
      if (!(await creditAccount(tx, event.data.account_id, String(event.data.amount)))) return { rejected: UNKNOWN_ACCOUNT_REASON };
      await recordCreditLedger(tx, ctx.consumer, [ledgerRow(event)]);
      return undefined;
    },
    async applyBatch(tx, events, ctx) {
      // Only the credited accounts' events are ledgered: an unknown account's event is refused.
      const credited = await creditAccountsWithLedger(tx, ctx.consumer, events.map(ledgerRow));
      const rejected = events.filter((e) => !credited.has(e.data.account_id)).map((e) => ({ eventId: e.eventId, reason: UNKNOWN_ACCOUNT_REASON }));
      return { rejected };
    },
  });
}

function ledgerRow(event: InboxEvent<CreditData>): CreditLedgerRow {
  return {
    eventId: event.eventId,
    accountId: event.data.account_id,
    amount: String(event.data.amount),
  };
}

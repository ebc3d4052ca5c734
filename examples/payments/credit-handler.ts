import { defineHandler, type EventHandler, type InboxEvent } from 'temporal-outbox';
import { PAYMENT_CONFIRMED } from './event-types';
import { creditAccount } from './queries/credit-accounts';
import { creditAccountsWithLedger } from './queries/credit-accounts-with-ledger';
import { recordCreditLedger, type CreditLedgerRow } from './queries/record-credit-ledger';
import { validateCredit, type CreditData, type CreditLimits } from './validate-credit';

/** Why a credit to an account that does not exist is parked (creating the account and re-driving it credits it once). */
export const UNKNOWN_ACCOUNT_REASON = 'unknown account';

/**
 * The worked example: `payment_confirmed` credits `accounts.balance` by `amount` (minor units),
 * exactly once per consumer. The batch path credits a whole batch in one statement. Every
 * applied credit also gets its line in payments_credit_ledger, in the same transaction (the
 * reconciliation audit checks balance = opening balance + ledgered credits).
 */
export function paymentConfirmedHandler(limits: CreditLimits): EventHandler<CreditData> {
  return defineHandler<CreditData>({
    eventType: PAYMENT_CONFIRMED,
    validate: (payload) => validateCredit(payload, limits),
    async apply(tx, event, ctx) {
      if (!(await creditAccount(tx, event.data.accountId, event.data.amount))) return { rejected: UNKNOWN_ACCOUNT_REASON };
      await recordCreditLedger(tx, ctx.consumer, [ledgerRow(event)]);
      return undefined;
    },
    async applyBatch(tx, events, ctx) {
      // Only the credited accounts' events are ledgered: an unknown account's event is refused.
      const credited = await creditAccountsWithLedger(tx, ctx.consumer, events.map(ledgerRow));
      const rejected = events.filter((e) => !credited.has(e.data.accountId)).map((e) => ({ eventId: e.eventId, reason: UNKNOWN_ACCOUNT_REASON }));
      return { rejected };
    },
  });
}

function ledgerRow(event: InboxEvent<CreditData>): CreditLedgerRow {
  return {
    eventId: event.eventId,
    accountId: event.data.accountId,
    amount: event.data.amount,
    kafkaTopic: event.topic,
    kafkaPartition: event.partition,
    kafkaOffset: event.offset,
  };
}

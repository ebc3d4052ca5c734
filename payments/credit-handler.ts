import { PAYMENT_CONFIRMED } from '../config/constants';
import { defineHandler, type EventHandler } from '../inbox/handler';
import { creditAccount, creditAccounts } from './queries/credit-accounts';
import { validateCredit, type CreditData, type CreditLimits } from './validate-credit';

/** Why a credit to an account that does not exist is parked (creating the account and re-driving it credits it once). */
export const UNKNOWN_ACCOUNT_REASON = 'unknown account';

/**
 * The worked example: `payment_confirmed` credits `accounts.balance` by `amount` (minor units),
 * exactly once per consumer. The batch path credits a whole batch in one statement.
 */
export function paymentConfirmedHandler(limits: CreditLimits): EventHandler<CreditData> {
  return defineHandler<CreditData>({
    eventType: PAYMENT_CONFIRMED,
    validate: (payload) => validateCredit(payload, limits),
    async apply(tx, event) {
      return (await creditAccount(tx, event.data.accountId, event.data.amount)) ? undefined : { rejected: UNKNOWN_ACCOUNT_REASON };
    },
    async applyBatch(tx, events) {
      const credited = await creditAccounts(
        tx,
        events.map((e) => e.data.accountId),
        events.map((e) => e.data.amount),
      );
      const rejected = events.filter((e) => !credited.has(e.data.accountId)).map((e) => ({ eventId: e.eventId, reason: UNKNOWN_ACCOUNT_REASON }));
      return { rejected };
    },
  });
}

import { quoteValue as quote, type Validation } from 'temporal-outbox';

// Every way a payment_confirmed payload can fail to be a credit, each with its own reason.

/** A validated credit. account_id and amount are decimal strings so bigint values survive JSON. */
export interface CreditData {
  accountId: string;
  amount: string;
}

export interface CreditLimits {
  /** Largest credit accepted, in minor units; anything above is "absurd" and parked. */
  maxCreditAmount: number;
}

const BIGINT_MAX = 9223372036854775807n;

export function validateCredit(p: Record<string, unknown>, limits: CreditLimits): Validation<CreditData> {
  const accountId = p.account_id;
  if (accountId === undefined || accountId === null || accountId === '') return { ok: false, reason: 'missing account id' };
  const account = positiveBigint(accountId);
  if (account === undefined || account > BIGINT_MAX) {
    return { ok: false, reason: `account id must be a positive integer (got ${quote(accountId)})` };
  }

  const amount = p.amount;
  if (amount === undefined || amount === null) return { ok: false, reason: 'missing amount' };
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) {
    return { ok: false, reason: `amount must be a positive safe integer in minor units (got ${quote(amount)})` };
  }
  if (amount > limits.maxCreditAmount) {
    return { ok: false, reason: `amount ${amount} exceeds the maximum credit of ${limits.maxCreditAmount}` };
  }
  return { ok: true, data: { accountId: account.toString(), amount: String(amount) } };
}

/** Accepts a JSON integer or a string of digits (ids beyond 2^53 travel as strings). */
function positiveBigint(value: unknown): bigint | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? BigInt(value) : undefined;
  if (typeof value === 'string' && /^[1-9][0-9]{0,18}$/.test(value)) return BigInt(value);
  return undefined;
}

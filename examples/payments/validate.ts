export class PaymentValidationError extends Error {
  override name = 'PaymentValidationError';
}

/** Amounts are minor units (cents): exact positive integers, within bigint's safe range for JS. */
export function assertAmount(amount: unknown): asserts amount is number {
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount <= 0) {
    throw new PaymentValidationError('amount must be a positive integer number of minor units');
  }
}

export function assertAccountId(accountId: unknown): asserts accountId is number {
  if (typeof accountId !== 'number' || !Number.isSafeInteger(accountId) || accountId <= 0) {
    throw new PaymentValidationError('accountId must be a positive integer');
  }
}

export function assertPaymentId(paymentId: unknown): asserts paymentId is string {
  if (typeof paymentId !== 'string' || paymentId.length === 0 || paymentId.length > 200) {
    throw new PaymentValidationError('paymentId must be a non-empty string of at most 200 characters');
  }
}

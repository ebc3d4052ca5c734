import type { SqlExecutor } from 'temporal-outbox';
import { assertAccountId, assertAmount, assertPaymentId } from './validate';

export interface CreatePaymentInput {
  paymentId: string;
  accountId: number;
  amount: number;
}

const CREATE_PAYMENT_SQL = `
  INSERT INTO payments (payment_id, account_id, amount)
  VALUES ($1, $2, $3)
  ON CONFLICT (payment_id) DO NOTHING`;

/** Records a pending payment; creating the same payment id twice is a no-op (`created: false`). */
export async function createPayment(db: SqlExecutor, input: CreatePaymentInput): Promise<{ created: boolean }> {
  assertPaymentId(input.paymentId);
  assertAccountId(input.accountId);
  assertAmount(input.amount);
  const { rowCount } = await db.query(CREATE_PAYMENT_SQL, [input.paymentId, input.accountId, input.amount]);
  return { created: rowCount === 1 };
}

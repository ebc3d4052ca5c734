import type { SqlExecutor } from '../db/executor';

/** Where an applied event sat on the topic, from the credit ledger (migration 0014). */
export const FIND_APPLIED_CREDIT_SQL = `
  SELECT consumer, account_id::text AS account_id, amount::text AS amount, kafka_topic, kafka_partition, kafka_offset::text AS kafka_offset, applied_at
    FROM payments_credit_ledger
   WHERE event_id = $1
   ORDER BY consumer`;

export interface AppliedCredit {
  consumer: string;
  accountId: string;
  amount: string;
  topic: string | null;
  partition: number | null;
  offset: number | null;
  appliedAt: Date;
}

export async function findAppliedCredit(db: SqlExecutor, eventId: string): Promise<AppliedCredit[]> {
  const { rows } = await db.query<{ consumer: string; account_id: string; amount: string; kafka_topic: string | null; kafka_partition: number | null; kafka_offset: string | null; applied_at: Date }>(FIND_APPLIED_CREDIT_SQL, [eventId]);
  return rows.map((r) => ({
    consumer: r.consumer,
    accountId: r.account_id,
    amount: r.amount,
    topic: r.kafka_topic,
    partition: r.kafka_partition,
    offset: r.kafka_offset === null ? null : Number(r.kafka_offset),
    appliedAt: r.applied_at,
  }));
}

import type { SqlExecutor } from 'temporal-outbox';

export interface PipelineStats {
  confirmedPayments: number;
  confirmedTotal: bigint;
  outboxPending: number;
  outboxParked: number;
  inboxParked: number;
  balanceTotal: bigint;
}

// Reads the whole pipeline's state in one round trip: what was confirmed (payments), what is
// still waiting to be published (outbox), and what reached the accounts (balances).
const PIPELINE_STATS_SQL = `
  SELECT (SELECT count(*) FROM payments WHERE status = 'confirmed')                        AS confirmed_payments,
         (SELECT coalesce(sum(amount), 0) FROM payments WHERE status = 'confirmed')        AS confirmed_total,
         (SELECT count(*) FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL) AS outbox_pending,
         (SELECT count(*) FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NOT NULL) AS outbox_parked,
         (SELECT count(*) FROM temporal_outbox.inbox_parked_events WHERE redriven_at IS NULL)             AS inbox_parked,
         (SELECT coalesce(sum(balance), 0) FROM accounts)                                   AS balance_total`;

export async function readPipelineStats(db: SqlExecutor): Promise<PipelineStats> {
  const { rows } = await db.query(PIPELINE_STATS_SQL);
  const r = rows[0]!;
  return {
    confirmedPayments: Number(r.confirmed_payments),
    confirmedTotal: BigInt(r.confirmed_total),
    outboxPending: Number(r.outbox_pending),
    outboxParked: Number(r.outbox_parked),
    inboxParked: Number(r.inbox_parked),
    balanceTotal: BigInt(r.balance_total),
  };
}

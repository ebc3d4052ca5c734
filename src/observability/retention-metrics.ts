import { Counter, Gauge, Histogram } from 'prom-client';
import { OUTBOX_REGISTRY } from './registry';

// What the retention worker exports (docs/observability.md).

export const retentionRowsDeleted = new Counter({
  registers: [OUTBOX_REGISTRY],
  name: 'retention_rows_deleted_total',
  help: 'Rows retention removed: published outbox rows past the window, inbox ids past the horizon',
  labelNames: ['table'] as const,
});

export const retentionRunDuration = new Histogram({
  registers: [OUTBOX_REGISTRY],
  name: 'retention_run_duration_seconds',
  help: 'Duration of each step of a retention run (sweep_outbox, prune_inbox)',
  labelNames: ['step'] as const,
  buckets: [0.01, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600],
});

export const retentionLastSuccess = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'retention_last_success_timestamp_seconds',
  help: 'Unix time a retention step last finished; alert when it stops moving',
  labelNames: ['step'] as const,
});

/** One finished retention step: its rows deleted and its duration. */
export function recordRetentionStep(step: 'sweep_outbox' | 'prune_inbox' | 'prune_parked', deletedByTable: Record<string, number>, ms: number): void {
  for (const [table, deleted] of Object.entries(deletedByTable)) retentionRowsDeleted.inc({ table }, deleted);
  retentionRunDuration.observe({ step }, ms / 1000);
  retentionLastSuccess.set({ step }, Date.now() / 1000);
}

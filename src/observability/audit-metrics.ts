import { Gauge } from 'prom-client';
import type { ConsumerAudit, DriftCounts, InvariantAudit } from '../audit/types';

// What the worker running the audit (the retention worker) exports
// (docs/observability.md). Set by the audit's own activities as each check finishes, so the
// figures are the last audit's, check by check, and survive no restart (0 until the next run).

export const auditDrift = new Gauge({
  name: 'outbox_audit_drift',
  help: 'Drift the last reconciliation audit found, by kind (notApplied, inboxRowMissing, appliedDiffers per consumer; balanceMismatches of the payments invariant, consumer ""); 0 = clean',
  labelNames: ['kind', 'consumer'] as const,
});

type ConsumerDriftKind = Exclude<keyof DriftCounts, 'balanceMismatches'>;

/** One consumer's check: its three kinds of delivery drift. */
export function recordConsumerDrift(audit: ConsumerAudit): void {
  const counts: Record<ConsumerDriftKind, number> = {
    notApplied: audit.notApplied.count,
    inboxRowMissing: audit.inboxRowMissing.count,
    appliedDiffers: audit.appliedDiffers.count,
  };
  for (const [kind, n] of Object.entries(counts)) auditDrift.set({ kind, consumer: audit.consumer }, n);
}

/** The invariant's check: accounts whose balance is not opening balance + applied credits. */
export function recordInvariantDrift(audit: InvariantAudit): void {
  auditDrift.set({ kind: 'balanceMismatches', consumer: '' }, audit.mismatches.count);
}

import { Gauge } from 'prom-client';
import { OUTBOX_REGISTRY } from './registry';
import type { AuditCheckReport, ConsumerAudit, TopicAudit } from '../audit/types';

// What the worker running the audit (the retention worker) exports
// (docs/observability.md). Set by the audit's own activities as each check finishes, so the
// figures are the last audit's, check by check, and survive no restart (0 until the next run).

export const auditDrift = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_audit_drift',
  help: 'Drift the last reconciliation audit found, by kind (notApplied and appliedWithoutOutboxRow per consumer; onTopicOnly, consumer ""; each of the service\'s own checks by its name, consumer ""); 0 = clean',
  labelNames: ['kind', 'consumer'] as const,
});

/** One consumer's check: published events neither in its inbox nor parked; applied events with no outbox row. */
export function recordConsumerDrift(audit: ConsumerAudit): void {
  auditDrift.set({ kind: 'notApplied', consumer: audit.consumer }, audit.notApplied.count);
  auditDrift.set({ kind: 'appliedWithoutOutboxRow', consumer: audit.consumer }, audit.appliedWithoutOutboxRow?.count ?? 0);
}

/** The topics' check: events only a topic has, over every audited topic. */
export function recordTopicDrift(topics: TopicAudit[]): void {
  auditDrift.set({ kind: 'onTopicOnly', consumer: '' }, topics.reduce((n, t) => n + t.onTopicOnly.count, 0));
}

/** One of the service's checks: its findings. */
export function recordCheckDrift(report: AuditCheckReport): void {
  auditDrift.set({ kind: report.name, consumer: '' }, report.findings.count);
}

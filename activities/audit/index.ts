import { ApplicationFailure } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { Config } from '../../src/config/env';
import { auditWindow } from '../../src/audit/queries/audit-window';
import { assertDistinctChecks, type AuditCheck } from '../../src/audit/check';
import { NO_AUDITED_CONSUMERS } from '../../src/audit/audited-consumers';
import { deliveryGaps } from '../../src/audit/queries/delivery-gaps';
import { outboxWindowCounts, outboxWindowParked } from '../../src/audit/queries/outbox-window';
import { recordCheckDrift, recordConsumerDrift } from '../../src/observability/audit-metrics';
import { AUDIT_FAILURES } from '../../workflows/audit/contract';
import type { AuditCheckReport, AuditedConsumer, AuditInput, AuditPlan, AuditSettings, AuditWindow, ConsumerAudit, OutboxWindowAudit } from '../../src/audit/types';

const DEFAULT_MAX_LISTED = 100;

export interface AuditActivityDeps {
  pool: Pool;
  config: Config;
  /** The service's own invariants (src/audit/check.ts), run after the delivery proof. */
  checks?: readonly AuditCheck[];
}

/** The audit's activities: read-only queries, each safe to retry. */
export function createAuditActivities({ pool, config, checks = [] }: AuditActivityDeps) {
  assertDistinctChecks(checks);
  return {
    /** Settings (input over configuration) and the window, on the database's clock. */
    async planAudit(input: AuditInput): Promise<AuditPlan> {
      const settings: AuditSettings = {
        windowMs: input.windowMs ?? config.audit.windowMs,
        settleMs: input.settleMs ?? config.audit.settleMs,
        consumers: input.consumers ?? config.audit.consumers,
        maxListed: input.maxListed ?? DEFAULT_MAX_LISTED,
      };
      if (!(settings.windowMs > 0) || !(settings.settleMs >= 0) || !(settings.maxListed > 0) || settings.consumers.length === 0) {
        const why = settings.consumers.length === 0 ? `${NO_AUDITED_CONSUMERS} (neither the schedule's input nor the worker's settings name any)` : `invalid audit settings: ${JSON.stringify(settings)}`;
        throw ApplicationFailure.create({ type: AUDIT_FAILURES.invalidInput, nonRetryable: true, message: why });
      }
      return { settings, window: await auditWindow(pool, settings.windowMs, settings.settleMs) };
    },

    async checkOutboxWindow({ window, maxListed }: { window: AuditWindow; maxListed: number }): Promise<OutboxWindowAudit> {
      const counts = await outboxWindowCounts(pool, window.from, window.to);
      const listed = counts.parked > 0 ? await outboxWindowParked(pool, window.from, window.to, maxListed) : [];
      return { events: counts.events, published: counts.published, pending: counts.pending, parked: { count: counts.parked, listed } };
    },

    async checkConsumer({ window, consumer, maxListed }: { window: AuditWindow; consumer: AuditedConsumer; maxListed: number }): Promise<ConsumerAudit> {
      const k = await deliveryGaps(pool, { consumer: consumer.consumer, eventTypes: consumer.eventTypes, from: window.from, to: window.to, maxListed });
      const total = Object.values(k).reduce((n, x) => n + x.count, 0);
      const audit: ConsumerAudit = {
        consumer: consumer.consumer,
        eventTypes: consumer.eventTypes,
        expected: total,
        applied: k.applied.count,
        parked: { count: k.parked.count, listed: k.parked.listed.map((r) => ({ where: 'inbox', consumer: consumer.consumer, eventId: r.eventId, outboxId: r.outboxId, reason: r.reason ?? '' })) },
        notApplied: { count: k['not-applied'].count, listed: k['not-applied'].listed.map((r) => ({ consumer: consumer.consumer, eventId: r.eventId, outboxId: r.outboxId, publishedAt: r.publishedAt })) },
      };
      recordConsumerDrift(audit);
      return audit;
    },

    /** The service's checks, one after another (each a read; the activity retries them together). */
    async runAuditChecks({ window, consumers, maxListed }: { window: AuditWindow; consumers: AuditedConsumer[]; maxListed: number }): Promise<AuditCheckReport[]> {
      const reports: AuditCheckReport[] = [];
      for (const check of checks) {
        const r = await check.run(pool, { window, consumers, maxListed });
        const report: AuditCheckReport = { name: check.name, description: check.description, checked: r.checked, findings: { count: r.findings.count, listed: r.findings.listed.slice(0, maxListed) } };
        recordCheckDrift(report);
        reports.push(report);
      }
      return reports;
    },
  };
}

export type AuditActivities = ReturnType<typeof createAuditActivities>;

import { ApplicationFailure } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { Config } from '../../src/config/env';
import { auditWindow } from '../../src/audit/queries/audit-window';
import { balanceMismatches } from '../../src/audit/queries/balance-mismatches';
import { deliveryGaps } from '../../src/audit/queries/delivery-gaps';
import { outboxWindowCounts, outboxWindowParked } from '../../src/audit/queries/outbox-window';
import { recordConsumerDrift, recordInvariantDrift } from '../../src/observability/audit-metrics';
import { AUDIT_FAILURES } from '../../workflows/audit/contract';
import type { AuditedConsumer, AuditInput, AuditPlan, AuditSettings, AuditWindow, ConsumerAudit, InvariantAudit, OutboxWindowAudit } from '../../src/audit/types';

const DEFAULT_MAX_LISTED = 100;

export interface AuditActivityDeps {
  pool: Pool;
  config: Config;
}

/** The audit's activities: read-only queries, each safe to retry. */
export function createAuditActivities({ pool, config }: AuditActivityDeps) {
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
        throw ApplicationFailure.create({ type: AUDIT_FAILURES.invalidInput, nonRetryable: true, message: `invalid audit settings: ${JSON.stringify(settings)}` });
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
        applied: k.applied.count + k['applied-differs'].count,
        parked: { count: k.parked.count, listed: k.parked.listed.map((r) => ({ where: 'inbox', consumer: consumer.consumer, eventId: r.eventId, outboxId: r.outboxId, reason: r.reason ?? '' })) },
        notApplied: { count: k['not-applied'].count, listed: k['not-applied'].listed.map((r) => ({ consumer: consumer.consumer, eventId: r.eventId, outboxId: r.outboxId, publishedAt: r.publishedAt })) },
        inboxRowMissing: {
          count: k['inbox-row-missing'].count,
          listed: k['inbox-row-missing'].listed.map((r) => ({ consumer: consumer.consumer, eventId: r.eventId, accountId: r.appliedAccountId ?? '', amount: r.appliedAmount ?? '' })),
        },
        appliedDiffers: {
          count: k['applied-differs'].count,
          listed: k['applied-differs'].listed.map((r) => ({
            consumer: consumer.consumer,
            eventId: r.eventId,
            published: { accountId: r.accountId, amount: r.amount },
            applied: { accountId: r.appliedAccountId ?? '', amount: r.appliedAmount ?? '' },
          })),
        },
      };
      recordConsumerDrift(audit);
      return audit;
    },

    async checkBalances({ maxListed }: { maxListed: number }): Promise<InvariantAudit> {
      const r = await balanceMismatches(pool, maxListed);
      const audit: InvariantAudit = { invariant: 'payments: balance = opening balance + sum of applied credits', accountsChecked: r.accounts, mismatches: { count: r.mismatched, listed: r.listed } };
      recordInvariantDrift(audit);
      return audit;
    },
  };
}

export type AuditActivities = ReturnType<typeof createAuditActivities>;

import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import type { Kafka } from 'kafkajs';
import type { Pool } from 'pg';
import type { Config } from '../../src/config/env';
import { auditWindow } from '../../src/audit/queries/audit-window';
import { assertDistinctChecks, type AuditCheck } from '../../src/audit/check';
import { appliedWithoutOutboxRow } from '../../src/audit/queries/applied-without-outbox';
import { NO_AUDITED_CONSUMERS } from '../../src/audit/audited-consumers';
import { deliveryGaps } from '../../src/audit/queries/delivery-gaps';
import { unknownTopicEvents } from '../../src/audit/queries/unknown-topic-events';
import { DEFAULT_CREATED_BEFORE_MARGIN_MS } from '../../src/audit/repair';
import { readTopicWindow, TopicMissingError } from '../../src/kafka/topic-events-since';
import { topicsForEventTypes } from '../../src/kafka/topics';
import { outboxWindowCounts, outboxWindowParked } from '../../src/audit/queries/outbox-window';
import { recordCheckDrift, recordConsumerDrift, recordTopicDrift } from '../../src/observability/audit-metrics';
import { AUDIT_FAILURES } from '../../workflows/audit/contract';
import type { AuditCheckReport, AuditedConsumer, AuditInput, AuditPlan, AuditSettings, AuditWindow, ConsumerAudit, OutboxWindowAudit, TopicAudit, TopicOnlyEvent } from '../../src/audit/types';

const DEFAULT_MAX_LISTED = 100;
// Under the activity's start-to-close timeout (workflows/audit/audit.ts): a read still short of
// the window's end then fails the attempt with its reason rather than being cut off silently.
const TOPIC_READ_TIMEOUT_MS = 4 * 60_000;

export interface AuditActivityDeps {
  pool: Pool;
  config: Config;
  /** The service's own invariants (src/audit/check.ts), run after the delivery proof. */
  checks?: readonly AuditCheck[];
  /** Reads the audited consumers' topics (audit.readTopics); without it no topic is read. */
  kafka?: Kafka;
}

/** The audit's activities: read-only queries, each safe to retry. */
export function createAuditActivities({ pool, config, checks = [], kafka }: AuditActivityDeps) {
  assertDistinctChecks(checks);
  return {
    /** Settings (input over configuration) and the window, on the database's clock. */
    async planAudit(input: AuditInput): Promise<AuditPlan> {
      const settings: AuditSettings = {
        windowMs: input.windowMs ?? config.audit.windowMs,
        settleMs: input.settleMs ?? config.audit.settleMs,
        consumers: input.consumers ?? config.audit.consumers,
        maxListed: input.maxListed ?? DEFAULT_MAX_LISTED,
        readTopics: (input.readTopics ?? config.audit.readTopics) && kafka !== undefined,
        maxTopicMessages: input.maxTopicMessages ?? config.audit.maxTopicMessages,
      };
      if (!(settings.windowMs > 0) || !(settings.settleMs >= 0) || !(settings.maxListed > 0) || !(settings.maxTopicMessages > 0) || settings.consumers.length === 0) {
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
      const orphans = await appliedWithoutOutboxRow(pool, { consumer: consumer.consumer, from: window.from, to: window.to, createdBeforeMarginMs: DEFAULT_CREATED_BEFORE_MARGIN_MS, maxListed });
      const audit: ConsumerAudit = {
        consumer: consumer.consumer,
        eventTypes: consumer.eventTypes,
        expected: total,
        applied: k.applied.count,
        parked: { count: k.parked.count, listed: k.parked.listed.map((r) => ({ where: 'inbox', consumer: consumer.consumer, eventId: r.eventId, outboxId: r.outboxId, reason: r.reason ?? '' })) },
        notApplied: { count: k['not-applied'].count, listed: k['not-applied'].listed.map((r) => ({ consumer: consumer.consumer, eventId: r.eventId, outboxId: r.outboxId, publishedAt: r.publishedAt })) },
        appliedWithoutOutboxRow: orphans,
      };
      recordConsumerDrift(audit);
      return audit;
    },

    /**
     * Each topic of the audited consumers, read over the window (by publish time, bounded by
     * maxTopicMessages), compared with the database chunk by chunk: events that neither the outbox
     * nor an audited inbox knows. Their outbox rows are looked for from the window's start minus
     * the margin an applied event's is (an event is created before it is published).
     */
    async checkTopics({ window, consumers, maxListed, maxTopicMessages }: { window: AuditWindow; consumers: AuditedConsumer[]; maxListed: number; maxTopicMessages: number }): Promise<TopicAudit[]> {
      if (!kafka) throw ApplicationFailure.create({ type: AUDIT_FAILURES.invalidInput, nonRetryable: true, message: 'the audit was asked to read its topics, and this worker was given no Kafka client' });
      const createdSince = new Date(Date.parse(window.from) - DEFAULT_CREATED_BEFORE_MARGIN_MS).toISOString();
      const inboxes = consumers.map((c) => c.consumer);
      const audits: TopicAudit[] = [];
      for (const topic of topicsForEventTypes(config.kafka, consumers.flatMap((c) => c.eventTypes))) {
        const onTopicOnly = { count: 0, listed: [] as TopicOnlyEvent[] };
        // A topic nothing was ever published to holds no event the database lacks.
        const read = await readTopicWindow(kafka, topic, {
          since: new Date(window.from),
          until: new Date(window.to),
          maxMessages: maxTopicMessages,
          timeoutMs: TOPIC_READ_TIMEOUT_MS,
          onEvents: async (events) => {
            heartbeat();
            const unknown = await unknownTopicEvents(pool, { eventIds: events.map((e) => e.eventId), createdSince, consumers: inboxes });
            for (const e of events) {
              if (!unknown.has(e.eventId)) continue;
              onTopicOnly.count += 1;
              if (onTopicOnly.listed.length < maxListed) onTopicOnly.listed.push({ topic, ...e });
            }
          },
        }).catch((err: unknown) => {
          if (err instanceof TopicMissingError) return { inWindow: 0, read: 0 };
          throw err;
        });
        audits.push({ topic, ...read, onTopicOnly });
      }
      recordTopicDrift(audits);
      return audits;
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

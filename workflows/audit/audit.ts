import { log, patched, proxyActivities, setCurrentDetails, upsertMemo, upsertSearchAttributes, type ActivityOptions } from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { AuditActivities } from '../../activities/audit';
import { driftCounts, findingKeys, hasDrift, reportMarkdown } from '../../src/audit/report';
import { AUDIT_FAILURES, type AuditInput, type AuditReport } from './contract';
import { SEARCH_ATTRIBUTES } from '../../src/config/constants';
import { PROGRAMMING_ERRORS } from '../programming-errors';

/**
 * Read-only queries over one window of events (a table read of the outbox and index lookups in
 * the inbox; the service's checks read its own tables): seconds on a retention-sized outbox. Retried while PostgreSQL restarts;
 * bad settings are not retried.
 */
const auditQuery = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: [AUDIT_FAILURES.invalidInput, ...PROGRAMMING_ERRORS] },
} satisfies ActivityOptions;

const { planAudit, checkOutboxWindow, checkConsumer, checkTopics, runAuditChecks } = proxyActivities<AuditActivities>(auditQuery);

const AUDIT_READS_TOPICS_PATCH = 'audit-reads-topics';

const STATUS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.auditStatus.name, SearchAttributeType.KEYWORD);
const FINDINGS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.auditFindings.name, SearchAttributeType.KEYWORD_LIST);

/**
 * One audit run, started by the `outbox-audit` Schedule: proves for a window of events
 * that every published event reached every consumer's inbox exactly once or is parked there with
 * a reason, that no event was applied or published that the outbox no longer records (what a
 * failover with asynchronous replication leaves), and that the service's own checks (its
 * invariants, src/audit/check.ts) hold. The report (exact event ids and the checks' keys) is
 * the result; the UI shows it as current details, memo and the OutboxAuditStatus /
 * OutboxAuditFindings search attributes (so `OutboxAuditStatus = 'drift'` lists the bad runs).
 */
export async function reconciliationWorkflow(input: AuditInput = {}): Promise<AuditReport> {
  const started = Date.now();
  const { settings, window } = await planAudit(input);
  setCurrentDetails(`**Outbox reconciliation running** · events created ${window.from} → ${window.to}`);
  const outbox = await checkOutboxWindow({ window, maxListed: settings.maxListed });
  const consumers = [];
  for (const consumer of settings.consumers) consumers.push(await checkConsumer({ window, consumer, maxListed: settings.maxListed }));
  // Events the database lost and the topic kept (a failover with asynchronous replication).
  // Behind patched(): a run whose plan predates the setting has none and replays without the read.
  const readTopics = settings.readTopics === true && patched(AUDIT_READS_TOPICS_PATCH);
  const topics = readTopics ? await checkTopics({ window, consumers: settings.consumers, maxListed: settings.maxListed, maxTopicMessages: settings.maxTopicMessages }) : [];
  const checks = await runAuditChecks({ window, consumers: settings.consumers, maxListed: settings.maxListed });
  const counts = driftCounts(consumers, checks, topics);
  const report: AuditReport = { window, settings, outbox, consumers, topics, checks, drift: hasDrift(counts), driftCounts: counts, durationMs: Date.now() - started };

  upsertSearchAttributes([
    { key: STATUS, value: report.drift ? 'drift' : 'clean' },
    { key: FINDINGS, value: findingKeys(report) },
  ]);
  upsertMemo({ audit: { drift: report.drift, ...counts, window: `${window.from} → ${window.to}`, events: outbox.events } });
  setCurrentDetails(reportMarkdown(report));
  if (report.drift) log.warn('reconciliation found drift', { ...counts });
  else log.info('reconciliation clean', { events: outbox.events });
  return report;
}

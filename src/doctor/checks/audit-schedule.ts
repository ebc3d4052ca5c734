import { lastAuditRun, driftLines } from '../../audit/last-run';
import { age, count } from '../format-values';
import { result, type Check, type Fact, type Problem } from '../types';

const SHOWN_FINDINGS = 10;

/** The audit: does its schedule exist, and what did its last finished run find? */
export const auditScheduleCheck: Check = async ({ config, temporal: client }) => {
  const { scheduleId } = config.audit;
  const title = `reconciliation audit ${scheduleId}`;
  // Temporal unreachable is reported by the retention schedule check already.
  if (!client) return result('audit', title, [{ label: 'temporal', value: 'unreachable' }], []);
  const run = await lastAuditRun(client, scheduleId);
  if (run === null) {
    return result('audit', title, [{ label: 'exists', value: false }], [
      { severity: 'warn', message: `there is no audit schedule ${scheduleId}: nothing checks that published events were applied exactly once`, fix: 'npx temporal-outbox audit schedule (and a retention worker runs it: npm run worker:retention)' },
    ]);
  }
  const facts: Fact[] = [{ label: 'exists', value: true }];
  if (run === undefined) {
    facts.push({ label: 'last run', value: null, display: 'none finished yet' });
    return result('audit', title, facts, []);
  }
  const problems: Problem[] = [];
  const ui = `${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}/workflows/${run.workflowId}/${run.runId}`;
  facts.push({ label: 'last run', value: run.workflowId, display: `${run.workflowId} (${run.status.toLowerCase()}, started ${age(Date.now() - run.startedAt.getTime())} ago)` });
  if (run.report) {
    const r = run.report;
    facts.push({ label: 'window', value: `${r.window.from} → ${r.window.to}` });
    facts.push({ label: 'events checked', value: r.outbox.events, display: `${count(r.outbox.events)} (${count(r.outbox.published)} published, ${count(r.outbox.pending)} pending, ${count(r.outbox.parked.count)} parked)` });
    facts.push({ label: 'drift', value: JSON.stringify(r.driftCounts), display: r.drift ? Object.entries(r.driftCounts).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') : 'none' });
    if (r.drift) {
      const lines = driftLines(r);
      const more = lines.length > SHOWN_FINDINGS ? `; and ${lines.length - SHOWN_FINDINGS} more listed in the run` : '';
      problems.push({
        severity: 'fail',
        message: `the last audit found drift: ${lines.slice(0, SHOWN_FINDINGS).join('; ')}${more}`,
        fix: `see the full report: npx temporal-outbox audit last (or ${ui}); then fix each finding as docs/audit.md says`,
      });
    }
  } else {
    problems.push({ severity: 'fail', message: `the last audit run ${run.status.toLowerCase()}: ${run.failure ?? 'no result'}`, fix: `open ${ui}, fix the cause, then: npx temporal-outbox audit run` });
  }
  return result('audit', title, facts, problems);
};

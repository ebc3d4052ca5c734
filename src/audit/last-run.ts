import { ScheduleNotFoundError, type Client, type WorkflowExecutionStatusName } from '@temporalio/client';
import type { AuditReport } from './types';

export interface LastAuditRun {
  workflowId: string;
  runId: string;
  status: WorkflowExecutionStatusName;
  startedAt: Date;
  report?: AuditReport;
  failure?: string;
}

/**
 * The audit schedule's newest run that has finished (a run still going is skipped, so the answer
 * is a complete report), or undefined when the schedule has none yet; null when there is no
 * schedule. Read from Temporal: the run's result is the report.
 */
export async function lastAuditRun(client: Client, scheduleId: string): Promise<LastAuditRun | undefined | null> {
  let description;
  try {
    description = await client.schedule.getHandle(scheduleId).describe();
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return null;
    throw err;
  }
  for (const action of [...description.info.recentActions].reverse()) {
    const { workflowId, firstExecutionRunId } = action.action.workflow;
    const handle = client.workflow.getHandle(workflowId, firstExecutionRunId);
    const d = await handle.describe();
    if (d.status.name === 'RUNNING') continue;
    const run: LastAuditRun = { workflowId, runId: firstExecutionRunId, status: d.status.name, startedAt: d.startTime };
    if (d.status.name === 'COMPLETED') run.report = (await handle.result()) as AuditReport;
    else run.failure = await handle.result().then(() => undefined, (e: Error) => (e.cause as Error | undefined)?.message ?? e.message);
    return run;
  }
  return undefined;
}

/** One line per finding, with the exact event ids and the checks' keys (the report lists the first 100 of each). */
export function driftLines(r: AuditReport): string[] {
  const lines: string[] = [];
  for (const c of r.consumers) {
    for (const x of c.notApplied.listed) lines.push(`event ${x.eventId} (outbox id ${x.outboxId}) published but never applied by ${c.consumer}`);
    for (const x of c.appliedWithoutOutboxRow?.listed ?? []) lines.push(`event ${x.eventId} applied by ${c.consumer} at ${x.processedAt} but has no outbox row (its producer's transaction was lost)`);
  }
  for (const t of r.topics ?? []) for (const x of t.onTopicOnly.listed) lines.push(`event ${x.eventId} only on topic ${t.topic} (partition ${x.partition}, offset ${x.offset}): no outbox row, not applied`);
  for (const check of r.checks ?? []) for (const f of check.findings.listed) lines.push(f.message);
  return lines;
}

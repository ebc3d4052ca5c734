import type { Client } from '@temporalio/client';
import type { AuditReport } from './types';

/**
 * Triggers the audit schedule now and waits for the run it starts (the schedule's overlap policy
 * applies: with a run already going, that run is the one awaited). Returns its workflow id and report.
 */
export async function triggerAuditRun(client: Client, scheduleId: string, timeoutMs = 300_000): Promise<{ workflowId: string; runId: string; report: AuditReport }> {
  const handle = client.schedule.getHandle(scheduleId);
  const before = new Set((await handle.describe()).info.recentActions.map((a) => a.action.workflow.firstExecutionRunId));
  const running = new Set((await handle.describe()).info.runningActions.map((a) => a.workflow.firstExecutionRunId));
  await handle.trigger();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = (await handle.describe()).info;
    const fresh = info.recentActions.map((a) => a.action.workflow).find((w) => !before.has(w.firstExecutionRunId));
    const joined = fresh ?? info.runningActions.map((a) => a.workflow).find((w) => running.has(w.firstExecutionRunId));
    if (joined) {
      const report = (await client.workflow.getHandle(joined.workflowId, joined.firstExecutionRunId).result()) as AuditReport;
      return { workflowId: joined.workflowId, runId: joined.firstExecutionRunId, report };
    }
    if (Date.now() > deadline) throw new Error(`the audit schedule ${scheduleId} started no run within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

import { ScheduleNotFoundError, WorkflowExecutionStatusName, type Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import type { RetentionReport } from '../../../activities/retention/types';
import { age, count } from '../format-values';
import { result, type Check, type Fact, type Problem } from '../types';

/** The exact command to create the schedule, for the fix column. */
export function createScheduleFix(scheduleId: string): string {
  return `npx temporal-outbox retention schedule  (or the temporal schedule create command in docs/retention.md${scheduleId === 'outbox-retention' ? '' : `, with --schedule-id ${scheduleId}`})`;
}

interface LastRun {
  workflowId: string;
  status: WorkflowExecutionStatusName;
  startedAt: Date;
  closedAt?: Date;
  report?: RetentionReport;
  failure?: string;
}

async function lastRun(client: Client, workflowId: string, runId: string): Promise<LastRun> {
  const handle = client.workflow.getHandle(workflowId, runId);
  const d = await handle.describe();
  const run: LastRun = { workflowId, status: d.status.name, startedAt: d.startTime, closedAt: d.closeTime };
  if (d.status.name === 'COMPLETED') run.report = (await handle.result()) as RetentionReport;
  if (d.status.name === 'FAILED' || d.status.name === 'TIMED_OUT') run.failure = await handle.result().then(() => undefined, (e: Error) => (e.cause as Error | undefined)?.message ?? e.message);
  return run;
}

async function pollerCount(client: Client, namespace: string, taskQueue: string): Promise<number> {
  const { pollers } = await client.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
  });
  return pollers?.length ?? 0;
}

/** Does the retention schedule exist, run, and succeed? Is any worker there to execute it? */
export const retentionScheduleCheck: Check = async ({ config, temporal: client, temporalError }) => {
  const { scheduleId, taskQueue } = config.retention;
  const title = `retention schedule ${scheduleId}`;
  if (!client) {
    return result('retention-schedule', title, [{ label: 'temporal', value: config.temporal.address }], [
      { severity: 'fail', message: `cannot reach Temporal at ${config.temporal.address}: ${temporalError ?? 'no connection'}`, fix: 'npm run stack:up, or set TEMPORAL_ADDRESS to your Temporal server' },
    ]);
  }
  let description;
  try {
    description = await client.schedule.getHandle(scheduleId).describe();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
    return result('retention-schedule', title, [{ label: 'exists', value: false }], [
      { severity: 'fail', message: `there is no retention schedule ${scheduleId}: nothing ever deletes published outbox rows or old inbox ids`, fix: createScheduleFix(scheduleId) },
    ]);
  }
  const problems: Problem[] = [];
  const action = description.action.type === 'startWorkflow' ? description.action : undefined;
  const facts: Fact[] = [
    { label: 'exists', value: true },
    { label: 'paused', value: description.state.paused, display: description.state.paused ? `yes${description.state.note ? ` (${description.state.note})` : ''}` : 'no' },
    { label: 'interval', value: description.spec.intervals?.map((i) => age(i.every)).join(', ') ?? null },
    { label: 'overlap policy', value: String(description.policies.overlap) },
    { label: 'task queue', value: action?.taskQueue ?? null },
    { label: 'runs taken', value: description.info.numActionsTaken, display: count(description.info.numActionsTaken) },
    { label: 'next run', value: description.info.nextActionTimes[0]?.toISOString() ?? null, display: description.info.nextActionTimes[0]?.toISOString() ?? '—' },
  ];
  if (description.state.paused) {
    problems.push({ severity: 'warn', message: `the retention schedule is paused${description.state.note ? `: ${description.state.note}` : ''}`, fix: `temporal schedule toggle --schedule-id ${scheduleId} --unpause --reason "retention resumed"` });
  }
  const recent = description.info.recentActions.at(-1);
  if (recent) {
    const run = await lastRun(client, recent.action.workflow.workflowId, recent.action.workflow.firstExecutionRunId);
    facts.push({ label: 'last run', value: run.workflowId });
    facts.push({ label: 'last run status', value: run.status, display: `${run.status} (started ${age(Date.now() - run.startedAt.getTime())} ago)` });
    if (run.report) {
      const r = run.report;
      facts.push({
        label: 'last run result',
        value: JSON.stringify({ rowsDeleted: r.rowsDeleted, outboxDeleted: r.outbox.deleted, inboxDeleted: r.inbox.deleted, batches: r.batches, durationMs: r.durationMs, stoppedBy: r.stoppedBy }),
        display: `${count(r.outbox.deleted)} outbox + ${count(r.inbox.deleted)} inbox rows in ${count(r.batches)} batches, ${age(r.durationMs)}, ${r.stoppedBy}`,
      });
    }
    if (run.failure !== undefined || run.status === 'TERMINATED') {
      problems.push({ severity: 'fail', message: `the last retention run ${run.status.toLowerCase()}: ${run.failure ?? 'terminated'}`, fix: `open ${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}/workflows/${run.workflowId} for the failure, fix it, then: temporal schedule trigger --schedule-id ${scheduleId}` });
    }
  } else {
    facts.push({ label: 'last run', value: null, display: 'none yet' });
  }
  if (action) {
    const pollers = await pollerCount(client, config.temporal.namespace, action.taskQueue);
    facts.push({ label: 'workers polling its queue', value: pollers });
    if (pollers === 0) {
      problems.push({ severity: 'warn', message: `no worker polls the retention task queue ${action.taskQueue}: scheduled runs will wait`, fix: `npm run worker:retention${action.taskQueue === taskQueue ? '' : ` (with RETENTION_TASK_QUEUE=${action.taskQueue})`}` });
    }
  }
  return result('retention-schedule', title, facts, problems);
};

import { ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../config/env';
import { upsertSchedule } from '../temporal/upsert-schedule';
import { RETENTION_WORKFLOW, type RetentionInput } from '../../workflows/retention/contract';

/** Scheduled runs get this id plus the scheduled time (Temporal appends it). */
export const RETENTION_RUN_WORKFLOW_ID = 'outbox-retention-run';

export function retentionInput(config: Config): Required<RetentionInput> {
  return {
    windowMs: config.retention.windowMs,
    batchSize: config.retention.batchSize,
    batchPauseMs: config.retention.batchPauseMs,
    timeBudgetMs: config.retention.timeBudgetMs,
    inboxHorizonMs: config.inbox.retentionMs,
    parkedHorizonMs: config.retention.parkedRetentionMs,
  };
}

export function retentionScheduleOptions(config: Config): ScheduleOptions {
  return {
    scheduleId: config.retention.scheduleId,
    spec: { intervals: [{ every: config.retention.interval }] },
    action: {
      type: 'startWorkflow',
      workflowType: RETENTION_WORKFLOW,
      workflowId: RETENTION_RUN_WORKFLOW_ID,
      taskQueue: config.retention.taskQueue,
      args: [retentionInput(config)],
    },
    // A run still going when the next is due is left alone: two sweeps of one table would only
    // contend for the same pages. The skipped run's work is done by the next one.
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
}

/**
 * Creates the retention schedule, or brings an existing one to the configured interval,
 * settings and task queue. Safe to run any number of times; a paused schedule stays paused.
 */
export async function ensureRetentionSchedule(client: Client, config: Config): Promise<'created' | 'updated'> {
  return upsertSchedule(client, retentionScheduleOptions(config));
}

import { ScheduleOverlapPolicy, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Config } from '../config/env';
import { upsertSchedule } from '../temporal/upsert-schedule';
import { auditedConsumers } from './audited-consumers';
import { AUDIT_WORKFLOW, type AuditInput } from '../../workflows/audit/contract';

/** Scheduled runs get this id plus the scheduled time (Temporal appends it). */
export const AUDIT_RUN_WORKFLOW_ID = 'outbox-audit-run';

/** The schedule's input; throws a ConfigError when no audited consumers are configured. */
export function auditInput(config: Config): AuditInput {
  return { windowMs: config.audit.windowMs, settleMs: config.audit.settleMs, consumers: auditedConsumers(config), readTopics: config.audit.readTopics, maxTopicMessages: config.audit.maxTopicMessages };
}

export function auditScheduleOptions(config: Config): ScheduleOptions {
  return {
    scheduleId: config.audit.scheduleId,
    spec: { intervals: [{ every: config.audit.interval }] },
    action: {
      type: 'startWorkflow',
      workflowType: AUDIT_WORKFLOW,
      workflowId: AUDIT_RUN_WORKFLOW_ID,
      taskQueue: config.audit.taskQueue,
      args: [auditInput(config)],
    },
    // Runs only read; one still going when the next is due is left to finish (the next window
    // overlaps it anyway).
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
  };
}

/** Creates the audit schedule or brings it to the current settings; a paused one stays paused. */
export async function ensureAuditSchedule(client: Client, config: Config): Promise<'created' | 'updated'> {
  return upsertSchedule(client, auditScheduleOptions(config));
}

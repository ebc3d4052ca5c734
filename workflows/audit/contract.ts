import type * as retentionWorkerWorkflows from '../scheduled';

// The reconciliation audit's contract, shared by the workflow, its activities, the schedule
// (src/audit/schedule.ts), the CLI and tests. Node code imports the workflow only as a type; a
// rename is a compile error here.

export type ReconciliationWorkflow = typeof retentionWorkerWorkflows.reconciliationWorkflow;
/** Workflow type of an audit run (the audit schedule's action). */
export const RECONCILIATION_WORKFLOW = 'reconciliationWorkflow' satisfies keyof typeof retentionWorkerWorkflows;

/** Failure types of the audit activities. */
export const AUDIT_FAILURES = {
  /** Settings the audit cannot run with: never retried. */
  invalidInput: 'InvalidAuditInput',
} as const;

export type { AuditInput, AuditReport } from '../../src/audit/types';

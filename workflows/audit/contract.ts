import type { AuditInput, AuditReport } from '../../src/audit/types';

// The audit's contract, shared by the workflow, its activities, the schedule
// (src/audit/schedule.ts), the CLI and tests. Node code starts the workflow by this name and type,
// never loading workflow code; a rename is a compile error.

/** The audit run, one of the workflows the retention worker bundles (workflows/scheduled.ts; workflows/contracts-implemented.ts checks it). */
export interface AuditWorkflows {
  reconciliationWorkflow: (input?: AuditInput) => Promise<AuditReport>;
}
export type AuditWorkflow = AuditWorkflows['reconciliationWorkflow'];
/**
 * Workflow type of an audit run (the audit schedule's action). The audit was first called the
 * reconciliation, and running schedules and recorded histories keep that workflow type.
 */
export const AUDIT_WORKFLOW = 'reconciliationWorkflow' satisfies keyof AuditWorkflows;

/** Failure types of the audit activities. */
export const AUDIT_FAILURES = {
  /** Settings the audit cannot run with: never retried. */
  invalidInput: 'InvalidAuditInput',
} as const;

export type { AuditInput, AuditReport } from '../../src/audit/types';

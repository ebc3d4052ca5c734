import type { RetentionInput, RetentionReport } from '../../activities/retention/types';

// The retention run's contract, shared by the workflow, its activities, the schedule
// (src/retention/schedule.ts), the doctor, tests and scripts. Node code starts the workflow by this
// name and type, never loading workflow code; a rename is a compile error.

/** The retention run, one of the workflows the retention worker bundles (workflows/scheduled.ts; workflows/contracts-implemented.ts checks it). */
export interface RetentionWorkflows {
  retentionWorkflow: (input?: RetentionInput) => Promise<RetentionReport>;
}
export type RetentionWorkflow = RetentionWorkflows['retentionWorkflow'];
/** Workflow type of a retention run (the schedule's action; `client.workflow.execute<RetentionWorkflow>(RETENTION_WORKFLOW, …)`). */
export const RETENTION_WORKFLOW = 'retentionWorkflow' satisfies keyof RetentionWorkflows;

/** Failure types of the retention activities. */
export const RETENTION_FAILURES = {
  /** Settings no run could honour (e.g. an inbox horizon shorter than Kafka can redeliver): never retried. */
  invalidInput: 'InvalidRetentionInput',
} as const;

export type { RetentionInput, RetentionReport, RetentionSettings, TableSizes } from '../../activities/retention/types';

import type * as retentionWorkerWorkflows from '../scheduled';

// The retention run's contract, shared by the workflow, its activities, the schedule
// (src/retention/schedule.ts), the doctor, tests and scripts. Node code imports the workflow only as
// a type; a rename is a compile error here.

export type RetentionWorkflow = typeof retentionWorkerWorkflows.retentionWorkflow;
/** Workflow type of a retention run (the schedule's action; `client.workflow.execute<RetentionWorkflow>(RETENTION_WORKFLOW, …)`). */
export const RETENTION_WORKFLOW = 'retentionWorkflow' satisfies keyof typeof retentionWorkerWorkflows;

/** Failure types of the retention activities. */
export const RETENTION_FAILURES = {
  /** Settings no run could honour (e.g. an inbox horizon shorter than Kafka can redeliver): never retried. */
  invalidInput: 'InvalidRetentionInput',
} as const;

export type { RetentionInput, RetentionReport, RetentionSettings, TableSizes } from '../../activities/retention/types';

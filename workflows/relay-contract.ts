import { defineQuery, defineSignal } from '@temporalio/workflow';
import type * as relayWorkerWorkflows from './relay-workflows';
import type { PauseState } from './relay-operator';
import type { RelayCounters, RelayStatus } from './relay-status';

// The relay shard's contract: what the workflow, its activities, the code that starts and
// operates relays (outbox/relay-control.ts, the CLI), tests and benchmarks share. Node code
// imports the workflow only as a type, so it never loads workflow code; a rename of the
// workflow, a query or a signal is a compile error here, not a silently ignored string.

export type RelayShardWorkflow = typeof relayWorkerWorkflows.relayShardWorkflow;
/** Workflow type of a relay shard (`client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, …)`). */
export const RELAY_SHARD_WORKFLOW = 'relayShardWorkflow' satisfies keyof typeof relayWorkerWorkflows;

export interface RelayShardInput {
  shardIndex: number;
  shardCount: number;
  batchSize: number;
  /** Continue-as-new after this many batches even if Temporal does not suggest it yet. */
  maxBatchesPerRun?: number;
  /** How long one idle wait may last before the loop comes round (default 60 s). */
  idleWaitMs?: number;
  /**
   * How fetch, publish and mark run. 'local' (the default, and the fast one): as local
   * activities in the worker that runs this workflow, with no task-queue round trip per call.
   * 'remote': as ordinary activities dispatched through the task queue (the original design,
   * kept so the benchmark can compare the two side by side). See docs/relay.md.
   */
  activityMode?: RelayActivityMode;
  /** Carried across continue-as-new; callers leave it out. */
  counters?: RelayCounters;
  /** Set while an operator has paused the shard; carried across continue-as-new. */
  paused?: PauseState;
}

export type RelayActivityMode = 'local' | 'remote';

export const statusQuery = defineQuery<RelayStatus>('status');
/** Finish the current batch, then complete: the first step of a reshard or a clean shutdown. */
export const stopSignal = defineSignal('stop');

/** Failure types of the relay's activities. */
export const RELAY_FAILURES = {
  /** The shard's count differs from the outbox's recorded layout: an operator error, never retried. */
  layoutMismatch: 'RelayLayoutMismatch',
} as const;

export { pauseSignal, resumeSignal, redriveUpdate, type PauseRequest, type PauseState, type RedriveRequest } from './relay-operator';
export { EMPTY_COUNTERS, type RelayCounters, type RelayStatus } from './relay-status';
export { RELAY_WORKFLOW_TASK_TIMEOUT } from './relay-timeouts';

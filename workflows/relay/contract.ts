import { defineQuery, defineSignal } from '@temporalio/workflow';
import type { PauseState } from './operator';
import type { RelayCounters, RelayStatus } from './status';

// The relay shard's contract: what the workflow, its activities, the code that starts and
// operates relays (src/outbox/relay-control.ts, the CLI), tests and benchmarks share. Node code
// imports the workflow only as a type, so it never loads workflow code; a rename of the
// workflow, a query or a signal is a compile error here, not a silently ignored string.

/** The workflows the relay worker bundles (workflows/relay/index.ts; workflows/contracts-implemented.ts checks it). */
export interface RelayWorkflows {
  relayShardWorkflow: (input: RelayShardInput) => Promise<RelayCounters>;
}
export type RelayShardWorkflow = RelayWorkflows['relayShardWorkflow'];
/** Workflow type of a relay shard (`client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, …)`). */
export const RELAY_SHARD_WORKFLOW = 'relayShardWorkflow' satisfies keyof RelayWorkflows;

export interface RelayShardInput {
  shardIndex: number;
  shardCount: number;
  batchSize: number;
  /**
   * Continue-as-new after this many batches even if Temporal does not suggest it yet. Local mode
   * defaults to 500 (each batch is history events); session mode has no batch budget by default
   * (a session is one activity however many batches it runs) and counts sessions instead.
   */
  maxBatchesPerRun?: number;
  /** Session mode: continue-as-new after this many sessions (default 200) unless Temporal suggests it sooner. */
  maxSessionsPerRun?: number;
  /** How long one idle wait may last before the loop comes round (default 60 s). */
  idleWaitMs?: number;
  /**
   * How fetch, publish and mark run. 'session' (the default): as a loop inside one activity, a
   * relay session, scheduled on the task queue of the relay worker the shard is placed on, so
   * shards spread over every live relay worker. 'local': as local activities in the worker that
   * runs this workflow (the default before sessions; a shard then stays on whichever worker holds
   * it). See docs/relay.md.
   */
  activityMode?: RelayActivityMode;
  /** Session mode: how long one session may last before the workflow records its counters and places the shard again (default 30 s). */
  sessionMs?: number;
  /**
   * Session mode: how long a drained session waits for more rows before the shard goes back to
   * its idle wait (default 10 s). Traffic whose pauses are shorter stays on a live session: no
   * wake (a workflow task, a placement, a new session and connection, some 15 history events)
   * per event. A waiting session holds its connection and lock and sends no queries.
   */
  drainGraceMs?: number;
  /** Carried across continue-as-new; callers leave it out. */
  counters?: RelayCounters;
  /** Set while an operator has paused the shard; carried across continue-as-new. */
  paused?: PauseState;
}

export type RelayActivityMode = 'session' | 'local';

/** Runs started by code that knows sessions are the default; histories from before replay as 'local'. */
export const RELAY_SESSIONS_PATCH = 'relay-sessions';
/**
 * Session-mode runs budgeted by sessions, not batches. Before it, a shard at a steady trickle
 * (many small batches) spent the 500-batch budget every few seconds and continued as new, a gap
 * of a new run, placement, session and connection each time; recorded runs replay the old rule.
 */
export const RELAY_SESSION_RUN_BUDGET_PATCH = 'relay-session-run-budget';
/**
 * A session that ran out of its time or batch budget hands the shard straight to a new session on
 * the same worker, without placing it again: placement is an activity on the shared queue, a
 * round trip through Temporal that every 30 s handover paid. Recorded runs replay placing each time.
 */
export const RELAY_SESSION_KEEPS_WORKER_PATCH = 'relay-session-keeps-worker';

export const statusQuery = defineQuery<RelayStatus>('status');
/** Finish the current batch, then complete: the first step of a reshard or a clean shutdown. */
export const stopSignal = defineSignal('stop');

/** Failure types of the relay's activities. */
export const RELAY_FAILURES = {
  /** The shard's count differs from the outbox's recorded layout: an operator error, never retried. */
  layoutMismatch: 'RelayLayoutMismatch',
  /** The input names an activity mode this release does not have (e.g. 'remote', removed in 0.2). */
  unknownActivityMode: 'RelayUnknownActivityMode',
} as const;

export { pauseSignal, resumeSignal, redriveUpdate, type PauseRequest, type PauseState, type RedriveRequest } from './operator';
export { EMPTY_COUNTERS, type RelayCounters, type RelayStatus } from './status';
export { RELAY_WORKFLOW_TASK_TIMEOUT } from './timeouts';

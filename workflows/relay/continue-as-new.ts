import { allHandlersFinished, condition, makeContinueAsNewFunc } from '@temporalio/workflow';
import type { RelayShardWorkflow } from './contract';
import type { ShardRun } from './shard-run';
import { RELAY_WORKFLOW_TASK_TIMEOUT } from './timeouts';

/** Local mode's run budget (and session mode's, for runs recorded before sessions were budgeted by count). */
export const DEFAULT_MAX_BATCHES_PER_RUN = 500;
// A session loop adds about ten history events (placement, the session, its workflow tasks, the
// search attributes): 200 sessions stay well inside Temporal's suggested history size.
export const DEFAULT_MAX_SESSIONS_PER_RUN = 200;

// The next run gets the relay's own task timeout even if this one was started with Temporal's
// default (e.g. by a `temporal workflow start` without --task-timeout).
const continueAsNewRelay = makeContinueAsNewFunc<RelayShardWorkflow>({ workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT });

/**
 * Ends this run and starts the next with the counters and the pause carried over. The caller
 * finishes what it has in flight first: nothing crosses the boundary half done.
 */
export async function continueAsNewShard(run: ShardRun): Promise<never> {
  run.counters.runs += 1;
  // A re-drive update still running would be cut off by the new run: let it answer first.
  await condition(allHandlersFinished);
  return continueAsNewRelay({ ...run.input, counters: run.counters, paused: run.paused });
}

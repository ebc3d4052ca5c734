import { condition, workflowInfo } from '@temporalio/workflow';
import type { ShardRun } from './shard-run';

/**
 * While an operator has the shard paused: says so, and publishes nothing until a resume, a stop,
 * or Temporal suggesting a new run (the pause is carried across it). The caller finishes what it
 * has in flight first, so a paused shard has nothing half done.
 */
export async function holdWhilePaused(run: ShardRun): Promise<void> {
  run.status.paused = run.paused;
  run.report('paused');
  await condition(() => run.paused === undefined || run.stopRequested || workflowInfo().continueAsNewSuggested);
  if (run.paused === undefined) {
    delete run.status.paused;
    run.report('running', true);
  }
}

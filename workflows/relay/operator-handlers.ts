import { type ActivityOptions, proxyActivities, setHandler } from '@temporalio/workflow';
import type { RelayActivities } from '../../activities/relay';
import { PROGRAMMING_ERRORS } from '../programming-errors';
import { statusQuery, stopSignal } from './contract';
import { pauseSignal, redriveUpdate, resumeSignal } from './operator';
import type { ShardRun } from './shard-run';

// An operator's re-drive (the `redrive` update): one UPDATE of the shard's parked rows. An
// ordinary activity, so it appears in the history and the UI with its input and result. A few
// retries cover a PostgreSQL restart; the operator sees a failure rather than a hang.
const redriveActivity = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5, nonRetryableErrorTypes: [...PROGRAMMING_ERRORS] },
} satisfies ActivityOptions;
const { redriveParked } = proxyActivities<RelayActivities>(redriveActivity);

/** Answers the `status` query and the operator's stop, pause, resume and re-drive. */
export function handleOperatorRequests(run: ShardRun): void {
  const { input, status } = run;
  setHandler(statusQuery, () => status);
  setHandler(stopSignal, () => {
    run.stopRequested = true;
    run.interrupt();
  });
  setHandler(pauseSignal, ({ reason }) => {
    run.paused = { reason: reason || 'paused by an operator', since: new Date().toISOString() };
    // An idle wait or a back-off ends now; a batch being published finishes first.
    run.interrupt();
  });
  setHandler(resumeSignal, () => {
    run.paused = undefined;
  });
  setHandler(redriveUpdate, async ({ ids }) => {
    const { redriven } = await redriveParked({ shardIndex: input.shardIndex, shardCount: input.shardCount, ids });
    if (status.parkedNow !== null) status.parkedNow = Math.max(0, status.parkedNow - redriven.length);
    return { redriven };
  });
}

import { type ActivityOptions, ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../../activities/relay';
import type { ShardRun } from './shard-run';

const DEFAULT_IDLE_WAIT_MS = 60_000;

// The idle wait stays an ordinary activity in both modes: it may last a minute, and a local
// activity would hold the workflow task open all that time (heartbeats, queries and signals
// waiting on it). It heartbeats at every fallback poll (10 s by default); cancellation (a stop
// signal) reaches it through that heartbeat. A failure only means "look again".
const waitActivity = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
} satisfies ActivityOptions;
const { waitForPendingEvents } = proxyActivities<RelayActivities>(waitActivity);

/**
 * A drained shard says it is idle and waits for its next pending event, at most `idleWaitMs`
 * (a stop or a pause cuts the wait short). 'pending' when the shard has work; undefined when
 * the wait timed out, failed, or was interrupted.
 */
export async function waitWhileIdle(run: ShardRun): Promise<'pending' | 'timeout' | undefined> {
  const { input } = run;
  run.report('idle');
  let outcome: 'pending' | 'timeout' | undefined;
  await run.untilStopped(async () => {
    ({ outcome } = await waitForPendingEvents({ shardIndex: input.shardIndex, shardCount: input.shardCount, timeoutMs: input.idleWaitMs ?? DEFAULT_IDLE_WAIT_MS }));
  });
  return outcome;
}

import { ActivityCancellationType, proxyActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../../activities/relay';

// A relay session on the placed worker's own task queue. Never retried by Temporal: a retry
// would go to the same queue, i.e. to the same (perhaps dead) worker; the workflow re-places the
// shard and starts a new session instead, backing off as a retry policy would (backoff.ts).
// - heartbeat 6 s: a killed or hung worker's session times out within 6 s of its last beat. The
//   session worker sends heartbeats every 2 s (SESSION_HEARTBEAT_THROTTLE in
//   workers/relay-worker-set.ts) instead of the SDK's 80 % of the timeout, so a healthy session
//   rides out a 4 s stall of its process before its shard moves;
// - schedule-to-start 15 s: a worker that died after being placed never picks it up;
// - start-to-close: the session's own length plus room for a slow last batch;
// - cancellation waits for the session to finish its batch (stop, pause): nothing half done.
const SESSION_HEARTBEAT_TIMEOUT = '6 seconds';
/** The relay session activity on the worker whose task queue is `taskQueue`. */
export const sessionOn = (taskQueue: string, sessionMs: number) =>
  proxyActivities<RelayActivities>({
    taskQueue,
    scheduleToStartTimeout: '15 seconds',
    startToCloseTimeout: sessionMs + 180_000,
    heartbeatTimeout: SESSION_HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 1 },
  }).relayShardSession;

export const DEFAULT_SESSION_MS = 30_000;
// A drained shard stays in its session this long for more rows before the idle wait takes over.
// Long enough to outlast the pauses of a trickle (an ordinary quiet hour): with a shorter grace
// each event after a pause paid a full wake, and the burst after it waited for that wake
// (bench:relay-wake; the figures: docs/measurements/relay-log.md, "Figures behind code comments").
export const DEFAULT_SESSION_DRAIN_GRACE_MS = 10_000;

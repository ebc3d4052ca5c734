import { type LocalActivityOptions, proxyLocalActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../../activities/relay';
import { RELAY_FAILURES } from './contract';

// Local mode (the default before relay sessions; runs started before them replay as it).
// Fetch, publish and mark run inside the worker that runs this workflow: no task-queue dispatch
// and no workflow task per call; each result is recorded as one marker event when the workflow
// task completes. What that means for a crash: a worker killed before its workflow task
// completed loses the markers since the last completion, and the next worker re-runs those
// calls on replay. Fetch re-reads whatever is pending now, publish re-sends (at-least-once,
// exactly the crash gap the inbox absorbs) and mark is idempotent — no guarantee changes, only
// *which* crash moments produce a duplicate (docs/relay.md, "Guarantees").
//
// Timeouts: a local activity may outlive the workflow task timeout (RELAY_WORKFLOW_TASK_TIMEOUT,
// 5 s): the worker heartbeats the task while it runs, recording the markers so far each time. Retries whose backoff stays under localRetryThreshold are
// slept inside the worker; longer ones become a durable workflow timer, so a long PostgreSQL
// or Kafka outage does not hold a workflow task open. Every policy retries forever, as below.
//
// Forever includes errors named like programming errors (TypeError, ...), unlike the bounded
// activities elsewhere (workflows/programming-errors.ts): kafkajs and pg raise TypeErrors of
// their own on connection churn (a broker or server restarting mid-request), and a perpetual
// shard ended by one would stop publishing its keys until someone restarts it. A real bug shows
// instead as the shard's pending activity with its attempt count and last failure in the UI,
// and as `doctor`'s oldest-pending-age failure.

// Reads only (layout check, poll, sometimes a capped count): well under a second. PostgreSQL
// down must not end a perpetual relay; a layout mismatch is an operator error, not retried.
const localFetchActivity = {
  startToCloseTimeout: '10 seconds',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: [RELAY_FAILURES.layoutMismatch] },
} satisfies LocalActivityOptions;

// One producer.send of up to a few thousand rows (kafkajs retries a send itself for ~30 s
// before failing). Local activities cannot heartbeat; a killed worker is detected by its
// workflow task timing out (5 s) instead, after which another worker replays and re-sends.
// The generous start-to-close only bounds a send that hangs; a timed-out attempt is retried.
const localPublishActivity = {
  startToCloseTimeout: '2 minutes',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} satisfies LocalActivityOptions;

// One UPDATE by primary key, idempotent (published_at IS NULL): retrying, or re-running it on
// replay after a crash, is always safe.
const localMarkActivity = {
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} satisfies LocalActivityOptions;

/** Local mode's fetch, publish and mark, each with its own policy. */
export const LOCAL_BATCH_ACTIVITIES: Pick<RelayActivities, 'fetchPendingBatch' | 'publishBatch' | 'markPublished'> = {
  fetchPendingBatch: proxyLocalActivities<RelayActivities>(localFetchActivity).fetchPendingBatch,
  publishBatch: proxyLocalActivities<RelayActivities>(localPublishActivity).publishBatch,
  markPublished: proxyLocalActivities<RelayActivities>(localMarkActivity).markPublished,
};

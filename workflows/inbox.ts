import { proxyActivities, proxyLocalActivities, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { ApplyCreditInput, ApplyCreditResult, InboxActivities } from '../activities/inbox';
import { INBOX_FAILURES, type EventBatch, type EventBatchResult } from './inbox-contract';

// One workflow per group of Kafka chunks (up to CONSUMER_BATCH_SIZE events). Only ids, types,
// positions and the handlers' validated data travel in history: a few hundred kB at most.

/**
 * Effects go to PostgreSQL and are idempotent through the inbox, so retrying is always safe.
 * Attempts are unlimited on purpose: while PostgreSQL is down the consumer waits with its
 * offset uncommitted, and nothing is lost; a batch that can never succeed fails at once.
 */
const applyActivity: ActivityOptions = {
  // One set-based statement takes well under a second; a worker killed mid-activity is noticed
  // after this long, and the retry (blocked by the inbox key until any straggler commits) is safe.
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '200 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    nonRetryableErrorTypes: [INBOX_FAILURES.invalidBatch, INBOX_FAILURES.noHandler],
  },
};

/**
 * The batch runs as a local activity: it executes inside the workflow task on the worker that
 * holds it, so a batch costs one workflow task instead of workflow task + activity task +
 * workflow task. On the dev server (one history shard, one SQLite connection) that round trip is
 * most of a batch's latency. Same retry policy; a worker dying mid-activity makes the workflow
 * task time out and another worker re-runs it, which the inbox makes harmless.
 */
const applyLocalActivity: LocalActivityOptions = {
  startToCloseTimeout: applyActivity.startToCloseTimeout,
  retry: applyActivity.retry,
};

const { applyCredit } = proxyActivities<InboxActivities>(applyActivity);
const { applyEvents } = proxyLocalActivities<InboxActivities>(applyLocalActivity);

/** Applies a batch of events through their handlers, each guarded by the inbox. */
export async function applyEventsWorkflow(batch: EventBatch): Promise<EventBatchResult> {
  return applyEvents(batch);
}

/** The seed's per-event path, kept as the literal demonstration of the inbox (test/integration/inbox-seed). */
export async function applyCreditWorkflow(input: ApplyCreditInput): Promise<ApplyCreditResult> {
  return applyCredit(input);
}

import { rawValueTypeInfo } from '@temporalio/common';
import { defineWorkflowOptions, proxyActivities, proxyLocalActivities, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { InboxActivities } from '../../activities/inbox';
import { INBOX_FAILURES, type EventBatchInput, type EventBatchResult, type RedriveRequest, type RedriveResult } from './contract';
import { PROGRAMMING_ERRORS } from '../programming-errors';

// One workflow per group of Kafka chunks (up to CONSUMER_BATCH_SIZE events). Only ids, types,
// positions and the handlers' validated data travel in history: a few hundred kB at most.

/**
 * Effects go to PostgreSQL and are idempotent through the inbox, so retrying is always safe.
 * Attempts are unlimited on purpose: while PostgreSQL is down the consumer waits with its
 * offset uncommitted, and nothing is lost; a batch that can never succeed (or a programming
 * error) fails at once.
 */
const applyActivity: ActivityOptions = {
  // One set-based statement takes well under a second; a worker killed mid-activity is noticed
  // after this long, and the retry (blocked by the inbox key until any straggler commits) is safe.
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '200 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    // A handler's bug (TypeError, ...) fails the workflow, visibly in the UI, instead of being
    // retried with the same result for ever; the consumer keeps the chunk's offsets and starts a
    // new run after its backoff, so nothing is lost and the failures repeat until the fix ships.
    nonRetryableErrorTypes: [INBOX_FAILURES.invalidBatch, INBOX_FAILURES.noHandler, ...PROGRAMMING_ERRORS],
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

const { applyEvents } = proxyLocalActivities<InboxActivities>(applyLocalActivity);

/**
 * Applies a batch of events through their handlers, each guarded by the inbox. The input is not
 * decoded here (it arrives as its payload, a RawValue) and goes to the activity as it came: the
 * workflow never reads it, and decoding and re-encoding up to CONSUMER_BATCH_SIZE events was most
 * of this workflow's cost. The payload stays plain JSON, so the UI shows the batch as before.
 */
export async function applyEventsWorkflow(batch: EventBatchInput): Promise<EventBatchResult> {
  return applyEvents(batch);
}
defineWorkflowOptions(applyEventsWorkflow, { staticOptions: { typeInfo: { inputTypes: [rawValueTypeInfo] } } });

/**
 * A redrive page locks up to this many parked rows and applies them in one transaction, a
 * statement or two per handler: seconds at most. Failures a retry cannot fix (a programming
 * error, no handler for the type on this worker) fail the workflow at once, visibly; others are
 * retried a bounded number of times, then the redrive fails and the operator runs it again.
 */
const REDRIVE_PAGE = 500;
const redriveActivity: ActivityOptions = {
  startToCloseTimeout: '1 minute',
  retry: {
    initialInterval: '1 second',
    maximumInterval: '10 seconds',
    maximumAttempts: 5,
    nonRetryableErrorTypes: [INBOX_FAILURES.invalidBatch, INBOX_FAILURES.noHandler, ...PROGRAMMING_ERRORS],
  },
};
const { redriveParkedEvents } = proxyActivities<InboxActivities>(redriveActivity);

/** Redrives parked events page by page (`outbox inbox redrive`); the result sums every page. */
export async function redriveParkedEventsWorkflow(request: RedriveRequest): Promise<RedriveResult> {
  const total: RedriveResult = { redriven: [], stillParked: [], notRedrivable: [], applied: 0, duplicates: 0 };
  for (let afterId: string | undefined; ; ) {
    const page = await redriveParkedEvents({ ...request, afterId, limit: REDRIVE_PAGE });
    total.redriven.push(...page.redriven);
    total.stillParked.push(...page.stillParked);
    total.notRedrivable.push(...page.notRedrivable);
    total.applied += page.applied;
    total.duplicates += page.duplicates;
    if (page.lastId === undefined || page.redriven.length + page.stillParked.length + page.notRedrivable.length < REDRIVE_PAGE) return total;
    afterId = page.lastId;
  }
}

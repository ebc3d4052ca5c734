import { proxyActivities, proxyLocalActivities, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import type { ApplyCreditInput, ApplyCreditResult, CreditBatch, CreditBatchResult, InboxActivities } from '../activities/inbox';

// One workflow per Kafka chunk (up to CONSUMER_BATCH_SIZE events of one partition). Only ids,
// accounts, amounts and offsets travel in history: a few hundred kB at most per workflow.

/**
 * Credits go to PostgreSQL and are idempotent through the inbox, so retrying is always safe.
 * Attempts are unlimited on purpose: while PostgreSQL is down the consumer waits with its
 * offset uncommitted, and nothing is lost; a batch that can never succeed fails at once.
 */
const creditActivity: ActivityOptions = {
  // One set-based statement takes well under a second; a worker killed mid-activity is noticed
  // after this long, and the retry (blocked by the inbox key until any straggler commits) is safe.
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '200 milliseconds',
    backoffCoefficient: 2,
    maximumInterval: '10 seconds',
    nonRetryableErrorTypes: ['InvalidCreditBatch'],
  },
};

/**
 * The batch credit runs as a local activity: it executes inside the workflow task on the worker
 * that holds it, so a chunk costs one workflow task instead of workflow task + activity task +
 * workflow task. On the dev server (one history shard, one SQLite connection) that round trip is
 * most of a chunk's latency. Same retry policy; a worker dying mid-activity makes the workflow
 * task time out and another worker re-runs it, which the inbox makes harmless.
 */
const creditLocalActivity: LocalActivityOptions = {
  startToCloseTimeout: creditActivity.startToCloseTimeout,
  retry: creditActivity.retry,
};

const { applyCredit } = proxyActivities<InboxActivities>(creditActivity);
const { applyCredits } = proxyLocalActivities<InboxActivities>(creditLocalActivity);

export async function applyCreditsWorkflow(batch: CreditBatch): Promise<CreditBatchResult> {
  return applyCredits(batch);
}

export async function applyCreditWorkflow(input: ApplyCreditInput): Promise<ApplyCreditResult> {
  return applyCredit(input);
}

import {
  type ActivityOptions,
  ActivityCancellationType,
  CancellationScope,
  continueAsNew,
  defineQuery,
  defineSignal,
  isCancellation,
  proxyActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { RelayActivities } from '../activities/relay';
import { SEARCH_ATTRIBUTES } from '../config/constants';
import { EMPTY_COUNTERS, statusMarkdown, type RelayCounters, type RelayStatus } from './relay-status';

export interface RelayShardInput {
  shardIndex: number;
  shardCount: number;
  batchSize: number;
  /** Continue-as-new after this many batches even if Temporal does not suggest it yet. */
  maxBatchesPerRun?: number;
  /** How long one idle wait may last before the loop comes round (default 60 s). */
  idleWaitMs?: number;
  /** Carried across continue-as-new; callers leave it out. */
  counters?: RelayCounters;
}

export const statusQuery = defineQuery<RelayStatus>('status');
/** Finish the current batch, then complete: the first step of a reshard or a clean shutdown. */
export const stopSignal = defineSignal('stop');

// Reads and one UPDATE: quick. Retried forever (PostgreSQL down must not end a perpetual
// relay), backing off to 30 s; a layout mismatch is an operator error and is not retried.
const fetchActivity = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: ['RelayLayoutMismatch'] },
} satisfies ActivityOptions;

// One producer.send of up to a few thousand rows. The heartbeat timeout, not start-to-close,
// is what detects a killed worker: within 10 s the batch is retried elsewhere (re-sending is
// the at-least-once part: Kafka may already hold these messages). Retried forever: Kafka
// being down delays events, it must not drop them. Bad rows are handled inside, as values.
const publishActivity = {
  startToCloseTimeout: '2 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} satisfies ActivityOptions;

// One UPDATE by primary key; idempotent (published_at IS NULL), so retrying is always safe.
// A short start-to-close is what notices a worker killed mid-mark (the update takes well
// under a second; a slow one that times out is just retried).
const markActivity = {
  startToCloseTimeout: '15 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} satisfies ActivityOptions;

// The idle wait heartbeats at every fallback poll (10 s by default); cancellation (a stop
// signal) reaches it through that heartbeat. A failure only means "look again".
const waitActivity = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
} satisfies ActivityOptions;

const { fetchPendingBatch } = proxyActivities<RelayActivities>(fetchActivity);
const { publishBatch } = proxyActivities<RelayActivities>(publishActivity);
const { markPublished } = proxyActivities<RelayActivities>(markActivity);
const { waitForPendingEvents } = proxyActivities<RelayActivities>(waitActivity);

const SHARD = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayShard.name, SearchAttributeType.INT);
const PUBLISHED = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayPublished.name, SearchAttributeType.INT);
const PENDING = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayPending.name, SearchAttributeType.INT);
const STATUS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayStatus.name, SearchAttributeType.KEYWORD);

// Each upsert is one history event; refresh the counters every few batches, state at once.
const SEARCH_ATTRIBUTE_EVERY_BATCHES = 10;
const BACKLOG_COUNT_EVERY_BATCHES = 20;
const DEFAULT_MAX_BATCHES_PER_RUN = 500;
const DEFAULT_IDLE_WAIT_MS = 60_000;

/**
 * One shard of the outbox relay, forever: fetch pending ids → publish → mark published.
 * Fixed workflow id per shard (config/constants relayWorkflowId), so Temporal itself refuses a
 * second relay for the same shard; the layout check refuses relays of another shard count.
 */
export async function relayShardWorkflow(input: RelayShardInput): Promise<RelayCounters> {
  const maxBatchesPerRun = input.maxBatchesPerRun ?? DEFAULT_MAX_BATCHES_PER_RUN;
  const counters: RelayCounters = { ...EMPTY_COUNTERS, ...input.counters };
  const status: RelayStatus = {
    ...counters,
    shardIndex: input.shardIndex,
    shardCount: input.shardCount,
    state: 'running',
    pending: null,
    parkedNow: null,
    batchesThisRun: 0,
    updatedAt: new Date().toISOString(),
  };
  let stopRequested = false;
  let interruptible: CancellationScope | undefined;
  let lastUpsert = { state: '', published: -1, pending: -2 };

  setHandler(statusQuery, () => status);
  setHandler(stopSignal, () => {
    stopRequested = true;
    interruptible?.cancel();
  });

  const report = (state: RelayStatus['state'], force = false) => {
    Object.assign(status, counters, { state, updatedAt: new Date().toISOString() });
    const changed = state !== lastUpsert.state || status.published !== lastUpsert.published || (status.pending ?? -1) !== lastUpsert.pending;
    if (!changed) return;
    setCurrentDetails(statusMarkdown(status));
    if (force || state !== lastUpsert.state || status.batchesThisRun % SEARCH_ATTRIBUTE_EVERY_BATCHES === 0) {
      upsertSearchAttributes([
        { key: SHARD, value: input.shardIndex },
        { key: PUBLISHED, value: status.published },
        { key: PENDING, value: status.pending ?? 0 },
        { key: STATUS, value: state },
      ]);
      lastUpsert = { state, published: status.published, pending: status.pending ?? -1 };
    }
  };

  /** Runs `work` so that a stop signal interrupts it; returns quietly when interrupted. */
  const untilStopped = async (work: () => Promise<unknown>) => {
    interruptible = new CancellationScope();
    try {
      await interruptible.run(work);
    } catch (err) {
      if (!isCancellation(err)) throw err;
    } finally {
      interruptible = undefined;
    }
  };

  report('running', true);
  let failureStreak = 0;
  while (!stopRequested) {
    if (status.batchesThisRun >= maxBatchesPerRun || workflowInfo().continueAsNewSuggested) {
      counters.runs += 1;
      await continueAsNew<typeof relayShardWorkflow>({ ...input, counters });
    }
    const { ids, backlog } = await fetchPendingBatch({
      shardIndex: input.shardIndex,
      shardCount: input.shardCount,
      limit: input.batchSize,
      countBacklog: status.batchesThisRun % BACKLOG_COUNT_EVERY_BATCHES === 0,
    });
    if (backlog) Object.assign(status, { pending: backlog.pending, parkedNow: backlog.parked });

    if (ids.length === 0) {
      report('idle');
      await untilStopped(() =>
        waitForPendingEvents({ shardIndex: input.shardIndex, shardCount: input.shardCount, timeoutMs: input.idleWaitMs ?? DEFAULT_IDLE_WAIT_MS }),
      );
      continue;
    }

    const { sentIds, parkedIds, failedIds } = await publishBatch({ shardIndex: input.shardIndex, ids });
    if (sentIds.length > 0) await markPublished({ ids: sentIds });

    counters.batches += 1;
    counters.published += sentIds.length;
    counters.parked += parkedIds.length;
    counters.lastId = Math.max(counters.lastId, ...sentIds);
    status.batchesThisRun += 1;
    if (status.pending !== null) status.pending = Math.max(0, status.pending - sentIds.length - parkedIds.length);

    if (sentIds.length === 0 && parkedIds.length === 0 && failedIds.length > 0) {
      // Only refused rows left and they keep their place (order per key): back off instead of
      // spinning, until they succeed or run out of attempts and are parked.
      failureStreak += 1;
      report('backing-off');
      await untilStopped(() => sleep(Math.min(30_000, 1_000 * 2 ** Math.min(failureStreak - 1, 5))));
    } else {
      failureStreak = 0;
      report('running');
    }
  }
  report('stopped', true);
  return counters;
}

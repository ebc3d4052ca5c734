import { workflowInfo } from '@temporalio/workflow';
import { continueAsNewShard, DEFAULT_MAX_BATCHES_PER_RUN } from './continue-as-new';
import { waitWhileIdle } from './idle-wait';
import { LOCAL_BATCH_ACTIVITIES } from './local-batch-steps';
import { holdWhilePaused } from './pause';
import type { ShardRun } from './shard-run';

const BACKLOG_COUNT_EVERY_BATCHES = 20;

/**
 * Local mode: fetch → publish → mark as local activities in the worker that runs this workflow,
 * one batch after another. Waits while the shard is idle or paused and backs off while only
 * refused rows are left. Ends on a stop, or continues as new when the run's budget is spent.
 */
export async function relayByLocalActivities(run: ShardRun): Promise<void> {
  const { input, counters, status } = run;
  const maxBatchesPerRun = input.maxBatchesPerRun ?? DEFAULT_MAX_BATCHES_PER_RUN;
  const { fetchPendingBatch, publishBatch, markPublished } = LOCAL_BATCH_ACTIVITIES;
  let failureStreak = 0;

  // The mark of batch k overlaps the fetch and publish of batch k+1 (at most one mark in flight;
  // the fetch skips the ids being marked). Kafka order is untouched: publishes stay strictly one
  // after the other.
  let marking: { ids: number[]; done: Promise<void> } | undefined;
  const finishMarking = async () => {
    const m = marking;
    marking = undefined;
    await m?.done;
  };
  const mark = (sentIds: number[], parkedCount: number) => {
    const done = markPublished({ ids: sentIds }).then(() => {
      counters.published += sentIds.length;
      counters.lastId = sentIds.reduce((max, id) => Math.max(max, id), counters.lastId);
      if (status.pending !== null) status.pending = Math.max(0, status.pending - sentIds.length - parkedCount);
    });
    return done;
  };

  while (!run.stopRequested) {
    if (status.batchesThisRun >= maxBatchesPerRun || workflowInfo().continueAsNewSuggested) {
      // Nothing crosses the boundary half done: the last batch is marked before the new run.
      await finishMarking();
      await continueAsNewShard(run);
    }
    if (run.paused) {
      // Nothing in flight while paused: the last batch is marked before the shard says so.
      await finishMarking();
      await holdWhilePaused(run);
      continue;
    }
    const { ids, backlog } = await fetchPendingBatch({
      shardIndex: input.shardIndex,
      shardCount: input.shardCount,
      limit: input.batchSize,
      countBacklog: status.batchesThisRun % BACKLOG_COUNT_EVERY_BATCHES === 0,
      ...(marking ? { excludeIds: marking.ids } : {}),
    });
    if (backlog) Object.assign(status, { pending: backlog.pending, parkedNow: backlog.parked });

    if (ids.length === 0) {
      await finishMarking();
      await waitWhileIdle(run);
      continue;
    }

    const { sentIds, parkedIds, failedIds } = await publishBatch({ shardIndex: input.shardIndex, ids });
    // The previous batch's mark has had the whole fetch and publish to finish; at most one in flight.
    await finishMarking();
    counters.batches += 1;
    counters.parked += parkedIds.length;
    status.batchesThisRun += 1;
    if (sentIds.length > 0) {
      marking = { ids: sentIds, done: mark(sentIds, parkedIds.length) };
    } else if (status.pending !== null) {
      status.pending = Math.max(0, status.pending - parkedIds.length);
    }

    if (sentIds.length === 0 && parkedIds.length === 0 && failedIds.length > 0) {
      // Only refused rows left and they keep their place (order per key): back off instead of
      // spinning, until they succeed or run out of attempts and are parked.
      failureStreak += 1;
      await run.backOff(failureStreak);
    } else {
      failureStreak = 0;
      run.report('running');
    }
  }
  await finishMarking();
}

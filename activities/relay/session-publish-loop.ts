import { backoffMs } from '../../workflows/relay/backoff';
import { abortableSleep } from './abortable-sleep';
import { DrainGrace } from './drain-grace';
import type { createFetchPendingBatch } from './fetch-pending-batch';
import type { MarkInFlight } from './mark-in-flight';
import type { PendingListener } from './pending-listener';
import type { SessionEnding } from './session-ending';
import { sessionPoll, type SessionPoll } from './session-poll';
import type { MarkPublishedInput, MarkPublishedOutput, PublishBatchInput, PublishBatchOutput, RelaySessionInput, RelaySessionOutput, RelaySessionProgress } from './types';

/** The two steps a session runs through the worker's registered activities. */
export interface SessionSteps {
  publishBatch(input: PublishBatchInput): Promise<PublishBatchOutput>;
  markPublished(input: MarkPublishedInput): Promise<MarkPublishedOutput>;
}

export interface PublishLoop {
  input: RelaySessionInput;
  out: RelaySessionOutput;
  progress: RelaySessionProgress;
  ending: SessionEnding;
  listener: PendingListener;
  /** Fetches on the connection holding the shard's lock. */
  fetchPendingBatch: ReturnType<typeof createFetchPendingBatch>;
  steps: SessionSteps;
  marks: MarkInFlight;
}

/**
 * A session's batches, one after another until the session ends: poll → publish → mark, with a
 * batch's mark beside the next poll, and a full batch's send beside the poll for the batch after
 * it; sends themselves stay one at a time, in id order. Returns once the last batch is marked.
 */
export async function publishUntilEnded({ input, out, progress, ending, listener, fetchPendingBatch, steps, marks }: PublishLoop): Promise<void> {
  const { shardIndex } = input;
  const { publishBatch, markPublished } = steps;
  const polls = sessionPoll(listener, fetchPendingBatch, input, out);
  const grace = new DrainGrace(listener, input, marks, ending.signal);
  let failureStreak = 0;
  // The listener's position before a poll whose batch went out whole: set, the next poll waits for a notification after it.
  let caughtUpAt: number | undefined;
  // The next batch's poll, started while a full batch is being sent (a full batch means the
  // shard has more). Sends stay one at a time, in id order; the poll is what overlaps.
  let nextPoll: ReturnType<SessionPoll['poll']> | undefined;
  progress.state = 'running';
  while (!ending.ended) {
    if (input.maxBatches !== undefined && out.batches >= input.maxBatches) {
      ending.end('batch-budget');
      break;
    }
    if (caughtUpAt !== undefined) {
      const since = caughtUpAt;
      caughtUpAt = undefined;
      if (!(await grace.notifiedWithin(since))) {
        ending.end('drained');
        break;
      }
    }
    const polled = nextPoll ?? polls.poll(marks.ids);
    nextPoll = undefined;
    const { ids, seen } = await polled;
    if (ids.length === 0) {
      if (!(await grace.notifiedWithin(seen))) {
        ending.end('drained');
        break;
      }
      continue;
    }
    grace.reset();
    const publishing = publishBatch({ shardIndex, ids });
    const budgetLeft = input.maxBatches === undefined || out.batches + 1 < input.maxBatches;
    if (ids.length === input.batchSize && budgetLeft) {
      nextPoll = polls.poll([...marks.ids, ...ids]);
      // Handled here too: a session that ends before using it (a failed send, a stop) drops it.
      nextPoll.catch(() => undefined);
    }
    const result = await publishing;
    try {
      await marks.finish();
    } catch (err) {
      // The previous batch's mark failed, which ends the session; this batch is on Kafka as well.
      // Marking it now leaves the next session one batch to send again, not two (at least once
      // either way; the inbox absorbs the copies).
      if (result.sentIds.length > 0) await markPublished({ ids: result.sentIds }).catch(() => undefined);
      throw err;
    }
    out.batches += 1;
    out.parked += result.parkedIds.length;
    if (result.parkedIds.length > 0) polls.parked();
    progress.batches = out.batches;
    if (result.sentIds.length > 0) {
      const sent = result.sentIds;
      marks.start(
        sent,
        markPublished({ ids: sent }).then(() => {
          out.published += sent.length;
          progress.published = out.published;
          out.lastId = sent.reduce((max, id) => Math.max(max, id), out.lastId);
        }),
      );
    }
    const wentOutWhole = result.sentIds.length + result.parkedIds.length === ids.length;
    // The next poll skipped this whole batch. Rows of it still pending (past the byte budget,
    // or refused for now with their key held back) come before any later row of their key:
    // its result is dropped and the shard polled again.
    if (!wentOutWhole) nextPoll = undefined;
    // A short batch that went out whole was everything pending at its poll: a row committed
    // since has its notification after `seen`, so polling again at once would find nothing.
    if (ids.length < input.batchSize && wentOutWhole) caughtUpAt = seen;
    if (result.sentIds.length === 0 && result.parkedIds.length === 0 && result.failedIds.length > 0) {
      // Only refused rows left, and they keep their place (order per key): the workflow's back-off.
      failureStreak += 1;
      progress.state = 'backing-off';
      await abortableSleep(backoffMs(failureStreak), ending.signal);
    } else {
      failureStreak = 0;
      progress.state = 'running';
    }
  }
  await marks.finish();
}

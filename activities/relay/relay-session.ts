import { Context, log } from '@temporalio/activity';
import type { PoolClient } from 'pg';
import { tryShardLock } from '../../src/outbox/queries/shard-lock';
import type { RelayActivityDeps } from './deps';
import { createFetchPendingBatch } from './fetch-pending-batch';
import type { PendingScanBounds } from './pending-scan-bound';
import type { MarkPublishedInput, MarkPublishedOutput, PublishBatchInput, PublishBatchOutput, RelaySessionInput, RelaySessionOutput, RelaySessionProgress } from './types';

/** The two steps a session runs through the worker's registered activities. */
export interface SessionSteps {
  publishBatch(input: PublishBatchInput): Promise<PublishBatchOutput>;
  markPublished(input: MarkPublishedInput): Promise<MarkPublishedOutput>;
}
import type { RelayWorkerRegistry } from './worker-registry';
import type { SessionConnections } from './session-connections';

// Heartbeat often: the throttle (80 % of the heartbeat timeout) decides what reaches the server.
const HEARTBEAT_EVERY_MS = 1_000;
// Between two tries for a shard lock another session still holds (it is finishing its batch).
const LOCK_RETRY_MS = 500;
// The status's pending and parked counts, refreshed at most this often (and after a batch parked
// rows): at a trickle every batch is short, and counting after each was a query per batch.
const BACKLOG_COUNT_EVERY_MS = 1_000;
// The count walks every pending row of the table up to its cap (the shard filter is not in the
// index), so its cost grows with the backlog: 25 ms per count at 200,000 pending, a fifth of a
// core for 8 shards counting once a second. While a shard has more than this many batches
// pending, its count is refreshed only every LARGE_BACKLOG_COUNT_EVERY_MS.
const LARGE_BACKLOG_BATCHES = 10;
const LARGE_BACKLOG_COUNT_EVERY_MS = 10_000;
// The shard count is checked against outbox_relay_layout before the first fetch and then this
// often. The layout changes only by a reshard, which stops every session first; the check is for
// a relay started with another count by mistake, which fails at its first fetch either way.
const LAYOUT_CHECK_EVERY_MS = 1_000;
// Same back-off as the workflow's for a batch of only refused rows (they keep their place).
const backoffMs = (streak: number) => Math.min(30_000, 1_000 * 2 ** Math.min(streak - 1, 5));

const abortableSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });

/**
 * A relay session: one shard relayed for a while by the worker it is placed on — the same
 * fetch → publish → mark steps the workflow's local activities run (the very same functions),
 * as a loop inside one activity scheduled on that worker's own task queue. It ends, always after
 * its last batch is marked, when the shard is drained (then the workflow waits for events), when
 * its time or batch budget is spent, when the shard is placed on another worker, when this worker
 * leaves, or when the workflow cancels it (stop, pause). It holds the shard's advisory lock on
 * the connection it polls on, so a session Temporal gave up on (its worker hung) and its
 * successor never relay one shard at the same time. Within a session the steps overlap where
 * order allows: a batch's mark runs beside the next poll, and a full batch's send beside the poll
 * for the batch after it; sends themselves stay one at a time, in id order.
 */
export function createRelaySession(deps: RelayActivityDeps & { registry: RelayWorkerRegistry; sessionConnections: SessionConnections }, bounds: PendingScanBounds, steps: () => SessionSteps) {
  const { listener, registry, sessionConnections } = deps;

  return async function relayShardSession(input: RelaySessionInput): Promise<RelaySessionOutput> {
    const ctx = Context.current();
    const { shardIndex, shardCount } = input;
    const avoid = input.avoid ?? [];
    const out: RelaySessionOutput = { workerId: registry.workerId, ended: 'drained', published: 0, batches: 0, parked: 0, lastId: 0 };
    const progress: RelaySessionProgress = { workerId: registry.workerId, state: 'locking', published: 0, batches: 0 };
    const ending = new AbortController();
    const end = (why: RelaySessionOutput['ended']) => {
      if (ending.signal.aborted) return;
      out.ended = why;
      ending.abort();
    };
    // Placed here by a fresher read of the live set than this worker's last one? Look again first.
    if (!registry.owns(shardIndex, shardCount, avoid)) await registry.refresh();
    if (!registry.owns(shardIndex, shardCount, avoid)) return { ...out, ended: 'moved' };

    const onCancel = () => end('cancelled');
    ctx.cancellationSignal.addEventListener('abort', onCancel);
    const unsubscribe = registry.onChange(() => {
      if (!registry.owns(shardIndex, shardCount, avoid)) end('moved');
    });
    const deadline = setTimeout(() => end('time-up'), input.sessionMs);
    const beat = setInterval(() => ctx.heartbeat(progress), HEARTBEAT_EVERY_MS);
    // The worker's own publish and mark activities (as registered, so a wrapper such as a test
    // fixture's fault injection sees the session's calls too).
    const { publishBatch, markPublished } = steps();
    const onClientError = () => end('failed');
    let client: PoolClient | undefined;
    // Given back to be kept only after a clean end (not thrown, its connection never failed).
    let clean = false;
    let marking: { ids: number[]; done: Promise<void> } | undefined;
    const finishMarking = async () => {
      const m = marking;
      marking = undefined;
      await m?.done;
    };
    try {
      // This connection runs the shard's polls and counts, their plan pinned to the pending index
      // (poll-plan-settings.ts says why the planner goes wrong under a large backlog); it is one a
      // session before this one left, when there is one (session-connections.ts).
      client = await sessionConnections.take();
      client.on('error', onClientError);
      while (!(await tryShardLock(client, shardIndex))) {
        if (ending.signal.aborted) {
          clean = true;
          return out;
        }
        await abortableSleep(LOCK_RETRY_MS, ending.signal);
      }
      // Polls run on the locked connection: if it breaks, the next poll fails and the session
      // ends, so a session never goes on relaying after losing its lock. Bodies and marks use
      // the pool (the mark overlaps the next fetch, as in the workflow's local mode).
      const fetchPendingBatch = createFetchPendingBatch({ ...deps, pool: client }, bounds);
      let failureStreak = 0;
      // Set at the first empty fetch after work: the session ends 'drained' once it passes.
      let drainedAt: number | undefined;
      let countedAt = Number.NEGATIVE_INFINITY;
      let layoutCheckedAt = Number.NEGATIVE_INFINITY;
      let parkedSinceCount = false;
      const countEveryMs = () => ((out.backlog?.pending ?? 0) > LARGE_BACKLOG_BATCHES * input.batchSize ? LARGE_BACKLOG_COUNT_EVERY_MS : BACKLOG_COUNT_EVERY_MS);
      // The listener's position before a poll whose batch went out whole: set, the next poll waits for a notification after it.
      let caughtUpAt: number | undefined;
      // A short grace before handing the shard back to the workflow's idle wait: at a steady
      // trickle of events a batch is often empty for a moment, and ending the session there
      // would cost a Temporal round trip per trickle. The next fetch is the check for work, so
      // a wake costs one poll, not a probe and then the same poll again.
      const notifiedWithinGrace = async (since: number) => {
        await finishMarking();
        drainedAt ??= Date.now() + input.drainGraceMs;
        const left = drainedAt - Date.now();
        return left > 0 && (await listener.wait(left, ending.signal, since, { shardIndex, shardCount }));
      };
      /**
       * One poll of the shard, skipping what is still in flight (`inFlight`: the batch being sent,
       * and the batch being marked). LISTEN is active and its position taken before the poll: a
       * row the poll's snapshot misses has a notification after `seen`, so an empty poll can wait.
       */
      const poll = async (inFlight: number[]) => {
        await listener.ensureListening();
        const seen = listener.position();
        const checkLayout = Date.now() - layoutCheckedAt >= LAYOUT_CHECK_EVERY_MS;
        if (checkLayout) layoutCheckedAt = Date.now();
        const { ids, backlog } = await fetchPendingBatch({
          shardIndex,
          shardCount,
          limit: input.batchSize,
          countBacklog: parkedSinceCount || Date.now() - countedAt >= countEveryMs(),
          countWhenShort: false,
          checkLayout,
          ...(inFlight.length > 0 ? { excludeIds: inFlight } : {}),
        });
        if (backlog) {
          out.backlog = backlog;
          countedAt = Date.now();
          parkedSinceCount = false;
        }
        return { ids, seen };
      };
      // The next batch's poll, started while a full batch is being sent (a full batch means the
      // shard has more). Sends stay one at a time, in id order; the poll is what overlaps.
      let nextPoll: Promise<Awaited<ReturnType<typeof poll>>> | undefined;
      progress.state = 'running';
      while (!ending.signal.aborted) {
        if (input.maxBatches !== undefined && out.batches >= input.maxBatches) {
          end('batch-budget');
          break;
        }
        if (caughtUpAt !== undefined) {
          const since = caughtUpAt;
          caughtUpAt = undefined;
          if (!(await notifiedWithinGrace(since))) {
            end('drained');
            break;
          }
        }
        const polled = nextPoll ?? poll(marking?.ids ?? []);
        nextPoll = undefined;
        const { ids, seen } = await polled;
        if (ids.length === 0) {
          if (!(await notifiedWithinGrace(seen))) {
            end('drained');
            break;
          }
          continue;
        }
        drainedAt = undefined;
        const publishing = publishBatch({ shardIndex, ids });
        const budgetLeft = input.maxBatches === undefined || out.batches + 1 < input.maxBatches;
        if (ids.length === input.batchSize && budgetLeft) {
          nextPoll = poll([...(marking?.ids ?? []), ...ids]);
          // Handled here too: a session that ends before using it (a failed send, a stop) drops it.
          nextPoll.catch(() => undefined);
        }
        const result = await publishing;
        await finishMarking();
        out.batches += 1;
        out.parked += result.parkedIds.length;
        if (result.parkedIds.length > 0) parkedSinceCount = true;
        progress.batches = out.batches;
        if (result.sentIds.length > 0) {
          const sent = result.sentIds;
          marking = {
            ids: sent,
            done: markPublished({ ids: sent }).then(() => {
              out.published += sent.length;
              progress.published = out.published;
              out.lastId = sent.reduce((max, id) => Math.max(max, id), out.lastId);
            }),
          };
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
          failureStreak += 1;
          progress.state = 'backing-off';
          await abortableSleep(backoffMs(failureStreak), ending.signal);
        } else {
          failureStreak = 0;
          progress.state = 'running';
        }
      }
      await finishMarking();
      clean = out.ended !== 'failed';
      return out;
    } catch (err) {
      // What Kafka acknowledged is still marked before the failure is reported: fewer re-sends.
      await finishMarking().catch(() => undefined);
      log.warn('relay session failed', { shardIndex, workerId: registry.workerId, batches: out.batches, error: String(err) });
      throw err;
    } finally {
      clearTimeout(deadline);
      clearInterval(beat);
      unsubscribe();
      ctx.cancellationSignal.removeEventListener('abort', onCancel);
      if (client) {
        client.removeListener('error', onClientError);
        // Releases the shard's lock either way: kept connections are unlocked first, the others
        // closed (one round trip fewer than unlocking the shard and then everything).
        await sessionConnections.give(client, clean);
      }
    }
  };
}

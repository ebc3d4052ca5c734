import { Context, log } from '@temporalio/activity';
import { Client } from 'pg';
import { releaseShardLock, tryShardLock } from '../../outbox/queries/shard-lock';
import type { RelayActivityDeps } from './deps';
import { createFetchPendingBatch } from './fetch-pending-batch';
import type { PendingScanBounds } from './pending-scan-bound';
import { pollPendingIds } from './poll-pending-ids';
import type { MarkPublishedInput, MarkPublishedOutput, PublishBatchInput, PublishBatchOutput, RelaySessionInput, RelaySessionOutput, RelaySessionProgress } from './types';

/** The two steps a session runs through the worker's registered activities. */
export interface SessionSteps {
  publishBatch(input: PublishBatchInput): Promise<PublishBatchOutput>;
  markPublished(input: MarkPublishedInput): Promise<MarkPublishedOutput>;
}
import type { RelayWorkerRegistry } from './worker-registry';

// Heartbeat often: the throttle (80 % of the heartbeat timeout) decides what reaches the server.
const HEARTBEAT_EVERY_MS = 1_000;
// Between two tries for a shard lock another session still holds (it is finishing its batch).
const LOCK_RETRY_MS = 500;
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
 * successor never relay one shard at the same time.
 */
export function createRelaySession(deps: RelayActivityDeps & { registry: RelayWorkerRegistry }, bounds: PendingScanBounds, steps: () => SessionSteps) {
  const { config, listener, registry } = deps;

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
    const bound = bounds.forShard(shardCount, shardIndex);
    // The worker's own publish and mark activities (as registered, so a wrapper such as a test
    // fixture's fault injection sees the session's calls too).
    const { publishBatch, markPublished } = steps();
    const client = new Client({ connectionString: config.database.workerUrls.relay });
    client.on('error', () => end('failed'));
    let locked = false;
    let marking: { ids: number[]; done: Promise<void> } | undefined;
    const finishMarking = async () => {
      const m = marking;
      marking = undefined;
      await m?.done;
    };
    try {
      await client.connect();
      while (!(locked = await tryShardLock(client, shardIndex))) {
        if (ending.signal.aborted) return out;
        await abortableSleep(LOCK_RETRY_MS, ending.signal);
      }
      // Polls run on the locked connection: if it breaks, the next poll fails and the session
      // ends, so a session never goes on relaying after losing its lock. Bodies and marks use
      // the pool (the mark overlaps the next fetch, as in the workflow's local mode).
      const fetchPendingBatch = createFetchPendingBatch({ ...deps, pool: client }, bounds);
      let failureStreak = 0;
      progress.state = 'running';
      while (!ending.signal.aborted) {
        if (input.maxBatches !== undefined && out.batches >= input.maxBatches) {
          end('batch-budget');
          break;
        }
        const { ids, backlog } = await fetchPendingBatch({
          shardIndex,
          shardCount,
          limit: input.batchSize,
          countBacklog: out.batches % 20 === 0,
          ...(marking ? { excludeIds: marking.ids } : {}),
        });
        if (backlog) out.backlog = backlog;
        if (ids.length === 0) {
          await finishMarking();
          // A short grace before handing the shard back to the workflow's idle wait: at a steady
          // trickle of events a batch is often empty for a moment, and ending the session there
          // would cost a Temporal round trip per trickle.
          if (!(await workArrives(input.drainGraceMs))) {
            end('drained');
            break;
          }
          continue;
        }
        const result = await publishBatch({ shardIndex, ids });
        await finishMarking();
        out.batches += 1;
        out.parked += result.parkedIds.length;
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
      if (locked) await releaseShardLock(client, shardIndex).catch(() => undefined);
      await client.end().catch(() => undefined);
    }

    /** True once the shard has pending rows within `graceMs` (LISTEN first, then a probe). */
    async function workArrives(graceMs: number): Promise<boolean> {
      await listener.ensureListening();
      const until = Date.now() + graceMs;
      for (;;) {
        const seen = listener.position();
        const ids = await pollPendingIds(client, bound, { shardCount, shardIndex, limit: 1 });
        if (ids.length > 0) return true;
        const left = until - Date.now();
        if (left <= 0 || ending.signal.aborted) return false;
        await listener.wait(left, ending.signal, seen);
      }
    }
  };
}

import type { createFetchPendingBatch } from './fetch-pending-batch';
import type { PendingListener } from './pending-listener';
import type { RelaySessionInput, RelaySessionOutput } from './types';

// The status's pending and parked counts, refreshed at most this often (and after a batch parked
// rows): at a trickle every batch is short, and counting after each was a query per batch.
const BACKLOG_COUNT_EVERY_MS = 1_000;
// The count walks every pending row of the table up to its cap (the shard filter is not in the
// index), so its cost grows with the backlog, and every shard pays it
// (docs/measurements/relay-log.md, "Figures behind code comments"). While a shard has more
// than this many batches pending, its count is refreshed only every LARGE_BACKLOG_COUNT_EVERY_MS.
const LARGE_BACKLOG_BATCHES = 10;
const LARGE_BACKLOG_COUNT_EVERY_MS = 10_000;
// The shard count is checked against outbox_relay_layout before the first fetch and then this
// often. The layout changes only by a reshard, which stops every session first; the check is for
// a relay started with another count by mistake, which fails at its first fetch either way.
const LAYOUT_CHECK_EVERY_MS = 1_000;

export interface SessionPoll {
  /**
   * One poll of the shard, skipping what is still in flight (`inFlight`: the batch being sent,
   * and the batch being marked). LISTEN is active and its position taken before the poll: a
   * row the poll's snapshot misses has a notification after `seen`, so an empty poll can wait.
   */
  poll(inFlight: number[]): Promise<{ ids: number[]; seen: number }>;
  /** A batch parked rows: the next poll counts the backlog again. */
  parked(): void;
}

/**
 * A session's polls, on the connection holding the shard's lock, with the backlog counted and
 * the layout checked now and then; each count lands in `out.backlog`.
 */
export function sessionPoll(listener: PendingListener, fetchPendingBatch: ReturnType<typeof createFetchPendingBatch>, input: RelaySessionInput, out: RelaySessionOutput): SessionPoll {
  const { shardIndex, shardCount } = input;
  let countedAt = Number.NEGATIVE_INFINITY;
  let layoutCheckedAt = Number.NEGATIVE_INFINITY;
  let parkedSinceCount = false;
  const countEveryMs = () => ((out.backlog?.pending ?? 0) > LARGE_BACKLOG_BATCHES * input.batchSize ? LARGE_BACKLOG_COUNT_EVERY_MS : BACKLOG_COUNT_EVERY_MS);
  return {
    async poll(inFlight) {
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
    },
    parked() {
      parkedSinceCount = true;
    },
  };
}

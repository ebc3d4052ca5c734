import { ApplicationFailure } from '@temporalio/common';
import { countShardBacklog } from '../../src/outbox/queries/count-pending';
import { ensureLayout, readLayout } from '../../src/outbox/queries/relay-layout';
import { RELAY_FAILURES } from '../../workflows/relay/contract';
import type { RelayActivityDeps } from './deps';
import type { PendingScanBounds } from './pending-scan-bound';
import { pollPendingIds } from './poll-pending-ids';
import type { FetchPendingBatchInput, FetchPendingBatchOutput } from './types';

// Bounded: the count is only for display, so a backlog of millions costs one capped scan.
const BACKLOG_COUNT_CAP = 1_000_000;

export function createFetchPendingBatch({ pool }: RelayActivityDeps, bounds: PendingScanBounds) {
  return async function fetchPendingBatch(input: FetchPendingBatchInput): Promise<FetchPendingBatchOutput> {
    // Checked before every fetch (a session: before its first and then once a second): a relay
    // started with another shard count would split the keys differently and could publish one
    // key from two shards at once, out of order.
    const layout = input.checkLayout === false ? input.shardCount : ((await readLayout(pool)) ?? (await ensureLayout(pool, input.shardCount)));
    if (layout !== input.shardCount) {
      throw ApplicationFailure.create({
        type: RELAY_FAILURES.layoutMismatch,
        nonRetryable: true,
        message: `this relay was started for ${input.shardCount} shards but outbox_relay_layout says ${layout}; stop every relay and reshard (npx temporal-outbox relay reshard --shards N)`,
        details: [{ expected: layout, actual: input.shardCount }],
      });
    }
    // Reads from the shard's proven bound, not from the beginning of the pending index: while
    // vacuum is held back the beginning is a long run of dead entries (pending-scan-bound.ts).
    const bound = bounds.forShard(input.shardCount, input.shardIndex);
    const ids = await pollPendingIds(pool, bound, { shardCount: input.shardCount, shardIndex: input.shardIndex, limit: input.limit, excludeIds: input.excludeIds });
    // A short batch means the shard is drained, the moment its (small) backlog is cheapest to count.
    if (!input.countBacklog && (ids.length === input.limit || input.countWhenShort === false)) return { ids };
    // Counted from the same bound, for the same reason (a display figure: rows made pending again
    // below the bound are counted once the next full scan has lowered it).
    const backlog = await countShardBacklog(pool, { shardCount: input.shardCount, shardIndex: input.shardIndex, cap: BACKLOG_COUNT_CAP, afterId: bound.snapshot.trusted });
    return { ids, backlog };
  };
}

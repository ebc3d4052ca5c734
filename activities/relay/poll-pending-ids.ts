import { fetchPendingIds } from '../../src/outbox/queries/fetch-pending-ids';
import { readIdHolders } from '../../src/outbox/queries/read-id-holders';
import type { SqlExecutor } from '../../src/db/executor';
import type { PendingScanBound } from './pending-scan-bound';

export interface PollPendingIdsInput {
  shardCount: number;
  shardIndex: number;
  limit: number;
  excludeIds?: number[];
}

/**
 * The relay's poll with its bound: reads from the shard's trusted bound (or from the beginning
 * when the periodic full scan is due), then, when the bound can move, reads who still holds an id
 * (one small pg_locks query). The argument for the bound is in pending-scan-bound.ts.
 */
export async function pollPendingIds(db: SqlExecutor, bound: PendingScanBound, input: PollPendingIdsInput): Promise<number[]> {
  const plan = bound.plan(performance.now());
  const ids = await fetchPendingIds(db, { ...input, afterId: plan.from });
  const { needHolders, ceiling } = bound.observePoll(plan, { ids, excludedIds: input.excludeIds });
  if (needHolders) {
    const { holders, ordered } = await readIdHolders(db);
    // A cached or descending sequence breaks step 2 of the argument: then the bound never moves
    // and every poll reads from the beginning, as before there was a bound.
    if (ordered) bound.observeHolders(ceiling, holders, performance.now());
    else bound.observeUnorderedSequence(performance.now());
  }
  return ids;
}

import { log } from '@temporalio/activity';
import type { Config } from '../../src/config/env';
import type { SqlExecutor } from '../../src/db/executor';
import type { SharedRoundTrips } from './shared-round-trips';
import type { BytesInFlight } from './bytes-in-flight';
import { planByteBudget } from '../../src/outbox/plan-byte-budget';
import { parkRows } from '../../src/outbox/queries/park-rows';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';

export interface LoadedBatch {
  /** Bodies of the id-order prefix that fits the byte budget. */
  rows: PendingRow[];
  /** Rows parked unread: over Kafka's message limit by their size alone. */
  parkedIds: number[];
  /** Legal rows left pending for the next batch (past the byte budget). */
  deferred: number;
  /** Gives the bodies' bytes back to the process-wide budget: call once the batch is sent (or failed). */
  release: () => void;
}

/**
 * Reads a batch's bodies only up to RELAY_BATCH_MAX_BYTES, deciding from the sizes PostgreSQL
 * already knows: a batch of 2,000 rows of 900 kB would otherwise be 1.8 GB in a worker capped
 * at a 256 MB heap. Rows too large for Kafka are parked with their reason without being read.
 */
export async function loadWithinByteBudget(pool: SqlExecutor, reads: Pick<SharedRoundTrips, 'readSizes' | 'readRows'>, config: Config, ids: number[], inFlight?: BytesInFlight): Promise<LoadedBatch> {
  const sizes = await reads.readSizes(ids);
  const plan = planByteBudget(sizes, config.relay.batchMaxBytes, config.kafka.maxMessageBytes);
  const parkedIds: number[] = [];
  if (plan.oversized.length > 0) {
    // Permanent by nature: no retry makes a payload smaller.
    await parkRows(pool, plan.oversized);
    parkedIds.push(...plan.oversized.map((r) => r.id));
    log.warn('parked outbox rows over the Kafka message limit', { count: plan.oversized.length, firstId: plan.oversized[0]!.id, reason: plan.oversized[0]!.reason });
  }
  // Waits while other shards of this process hold their batches' bodies (bytes-in-flight.ts).
  const release = inFlight && plan.loadBytes > 0 ? await inFlight.acquire(plan.loadBytes) : () => undefined;
  try {
    // Small rows came with their sizes (shared-round-trips.ts); others are read now, within the budget.
    const toLoad = new Set(plan.loadIds);
    const came = sizes.flatMap((s) => (s.row && toLoad.has(s.id) ? [s.row] : []));
    const rows = came.length === plan.loadIds.length ? came : await reads.readRows(plan.loadIds);
    return { rows, parkedIds, deferred: plan.deferred, release };
  } catch (err) {
    release();
    throw err;
  }
}

import type { Pool } from 'pg';
import { inTransaction } from '../db/pool';
import { deletePublishedRange } from './queries/delete-published-range';
import { probeOutboxId } from './queries/outbox-id-probe';

export interface SweepInput {
  cutoff: Date;
  /** Where to start (inclusive): the walk's start, or the resume point of an interrupted sweep. */
  fromId: number;
  /** Exclusive end of the walk. */
  untilId: number;
  /** Ids per batch; ids are dense, so about as many rows. */
  batchSize: number;
  /** Epoch ms after which no new batch starts. */
  deadline: number;
  /**
   * Rest between batches, leaving CPU and I/O to the relay's poll on a small machine; 0 (the
   * default) deletes flat out.
   */
  pauseMs?: number;
  /** Called after every batch (the activity heartbeats from here). Returning true stops the sweep. */
  onBatch?: (progress: SweepProgress, batch: SweepBatch) => boolean | void | Promise<boolean | void>;
}

export interface SweepBatch {
  fromId: number;
  toId: number;
  deleted: number;
  ms: number;
}

export interface SweepProgress {
  /** Where the next batch starts: the resume point. */
  nextId: number;
  deleted: number;
  batches: number;
}

export interface SweepResult extends SweepProgress {
  /** Every key range up to untilId was visited. */
  complete: boolean;
  stoppedBy: 'done' | 'time-budget' | 'cancelled';
}

/**
 * Deletes the published rows older than the cutoff in [fromId, untilId), one key range per
 * short transaction, so locks and WAL stay small, vacuum can follow behind, and the relay's poll
 * never waits behind one giant delete.
 */
export async function sweepPublishedOutbox(pool: Pool, input: SweepInput, start: Partial<SweepProgress> = {}): Promise<SweepResult> {
  const progress: SweepProgress = { nextId: start.nextId ?? input.fromId, deleted: start.deleted ?? 0, batches: start.batches ?? 0 };
  while (progress.nextId < input.untilId) {
    if (Date.now() >= input.deadline) return { ...progress, complete: false, stoppedBy: 'time-budget' };
    const fromId = progress.nextId;
    const toId = Math.min(fromId + input.batchSize, input.untilId);
    const t0 = performance.now();
    const deleted = await inTransaction(pool, async (tx) => {
      // A lost commit only means those rows are deleted again by the next run, so this batch need
      // not wait for its WAL flush: on a busy disk that wait is most of a small batch's time.
      await tx.query(`SET LOCAL synchronous_commit = off`);
      return deletePublishedRange(tx, { fromId, toId, cutoff: input.cutoff });
    });
    const ms = performance.now() - t0;
    progress.deleted += deleted;
    progress.batches += 1;
    progress.nextId = toId;
    if (deleted === 0 && toId < input.untilId) {
      // An empty stretch (deleted earlier, or pending/parked rows only): jump to the next row
      // instead of stepping through it one batch at a time.
      const next = await probeOutboxId(pool, toId);
      progress.nextId = next ? Math.min(next.id, input.untilId) : input.untilId;
    }
    if ((await input.onBatch?.({ ...progress }, { fromId, toId, deleted, ms })) === true) {
      return { ...progress, complete: false, stoppedBy: 'cancelled' };
    }
    if (input.pauseMs) await new Promise((resolve) => setTimeout(resolve, input.pauseMs));
  }
  return { ...progress, complete: true, stoppedBy: 'done' };
}

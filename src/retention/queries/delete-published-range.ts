import type { SqlExecutor } from '../../db/executor';

/**
 * One retention batch: the published rows of one primary-key range that were published before
 * the cutoff. A key range, not `ORDER BY id LIMIT n`: each batch starts its index scan at its own
 * lower bound, so it never wades through the dead index entries the batches before it left
 * behind (they stay until vacuum), and batch 1,000 costs what batch 1 did.
 *
 * `published_at < $3` is the whole safety argument: a pending row (NULL) or a parked row (NULL
 * published_at too) can never match, and a row an operator re-queues mid-batch (published_at set
 * back to NULL) is re-checked under its row lock before it would be deleted.
 */
export const DELETE_PUBLISHED_RANGE_SQL = `
  DELETE FROM temporal_outbox.outbox_events
   WHERE id >= $1::bigint
     AND id <  $2::bigint
     AND published_at < $3::timestamptz`;

export interface DeletePublishedRangeInput {
  fromId: number;
  /** Exclusive. */
  toId: number;
  cutoff: Date;
}

export async function deletePublishedRange(db: SqlExecutor, input: DeletePublishedRangeInput): Promise<number> {
  const result = await db.query(DELETE_PUBLISHED_RANGE_SQL, [input.fromId, input.toId, input.cutoff]);
  return result.rowCount ?? 0;
}

import type { SqlExecutor } from '../../db/executor';

/**
 * Outbox rows parked unpublished before the cutoff, a batch at a time (the partial index of
 * parked rows). Only parked, never-published rows: a pending row is never touched, and a
 * published one is the outbox sweep's.
 */
export const DELETE_OLD_PARKED_OUTBOX_SQL = `
DELETE FROM temporal_outbox.outbox_events
 WHERE id IN (SELECT id FROM temporal_outbox.outbox_events
               WHERE parked_at IS NOT NULL AND published_at IS NULL AND parked_at < $1::timestamptz
               ORDER BY id LIMIT $2)`;

export async function deleteOldParkedOutbox(db: SqlExecutor, cutoff: Date, limit: number): Promise<number> {
  return (await db.query(DELETE_OLD_PARKED_OUTBOX_SQL, [cutoff, limit])).rowCount ?? 0;
}

import type { SqlExecutor } from '../db/executor';

// Forgets processed event ids older than the horizon, in bounded batches. The horizon must
// exceed topic retention + maximum consumer lag (src/config/env.ts refuses anything shorter):
// an id forgotten while Kafka can still redeliver its event would be credited twice.
//
// Batches walk the processed_at index as a cursor (processed_at >= previous batch's newest):
// a plain "ORDER BY ... LIMIT n" delete restarts at the index's head every time and wades
// through the dead entries the previous batches left there, getting slower as it works.

export interface PruneProcessedEventsInput {
  /** Rows processed more than this long ago are deleted. */
  horizonMs: number;
  /** Rows per DELETE statement (each its own short transaction). */
  batchSize: number;
  /** Stop after this long even if old rows remain; the next scheduled run continues. */
  timeBudgetMs: number;
}

export interface PruneProcessedEventsResult {
  deleted: number;
  batches: number;
  /** Rows older than this were eligible. */
  cutoff: string;
  /** False when the time budget ran out before every eligible row was gone. */
  complete: boolean;
}

export const PRUNE_PROCESSED_EVENTS_SQL = `
WITH victims AS (
  SELECT ctid, processed_at FROM temporal_outbox.inbox_processed_events
  WHERE processed_at >= $1::timestamptz AND processed_at < $2::timestamptz
  ORDER BY processed_at
  LIMIT $3
),
gone AS (
  DELETE FROM temporal_outbox.inbox_processed_events e USING victims v WHERE e.ctid = v.ctid
  RETURNING v.processed_at
)
SELECT count(*)::int AS deleted, max(processed_at) AS newest FROM gone`;

/**
 * Pass a Pool (not a client inside a transaction): each batch must commit on its own so
 * locks stay short and vacuum can reclaim as it goes.
 */
export async function pruneProcessedEvents(db: SqlExecutor, input: PruneProcessedEventsInput): Promise<PruneProcessedEventsResult> {
  const { rows } = await db.query<{ cutoff: Date }>(`SELECT now() - make_interval(secs => $1::double precision / 1000) AS cutoff`, [input.horizonMs]);
  const cutoff = rows[0]!.cutoff;
  const deadline = Date.now() + input.timeBudgetMs;
  let from: Date | string = '-infinity';
  let deleted = 0;
  let batches = 0;
  for (;;) {
    const result: { rows: { deleted: number; newest: Date | null }[] } = await db.query(PRUNE_PROCESSED_EVENTS_SQL, [from, cutoff, input.batchSize]);
    const batch = result.rows[0]!;
    batches += 1;
    deleted += batch.deleted;
    if (batch.deleted < input.batchSize || batch.newest === null) return { deleted, batches, cutoff: cutoff.toISOString(), complete: true };
    from = batch.newest;
    if (Date.now() >= deadline) return { deleted, batches, cutoff: cutoff.toISOString(), complete: false };
  }
}

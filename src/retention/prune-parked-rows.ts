import type { SqlExecutor } from '../db/executor';
import { databaseTimeAgo } from './database-clock';
import { deleteOldParkedInbox } from './queries/delete-old-parked-inbox';
import { deleteOldParkedOutbox } from './queries/delete-old-parked-outbox';

// Parked rows are evidence for a person: kept PARKED_RETENTION_MS (time to look, fix and
// redrive), then deleted by the retention run. Each batch commits on its own (pass a Pool).

export interface PruneParkedRowsResult {
  /** Rows parked before this (database clock) were eligible. */
  cutoff: string;
  inboxDeleted: number;
  outboxDeleted: number;
  complete: boolean;
}

export async function pruneParkedRows(db: SqlExecutor, input: { horizonMs: number; batchSize: number; deadline: number }): Promise<PruneParkedRowsResult> {
  const cutoff = await databaseTimeAgo(db, input.horizonMs);
  let inboxDeleted = 0;
  let outboxDeleted = 0;
  for (const [remove, add] of [
    [deleteOldParkedInbox, (n: number) => (inboxDeleted += n)],
    [deleteOldParkedOutbox, (n: number) => (outboxDeleted += n)],
  ] as const) {
    for (;;) {
      const n = await remove(db, cutoff, input.batchSize);
      add(n);
      if (n < input.batchSize) break;
      if (Date.now() >= input.deadline) return { cutoff: cutoff.toISOString(), inboxDeleted, outboxDeleted, complete: false };
    }
  }
  return { cutoff: cutoff.toISOString(), inboxDeleted, outboxDeleted, complete: true };
}

import type { SqlExecutor } from '../../db/executor';

/** Parked inbox events parked before the cutoff, a batch at a time (parked_at index); how many went. */
export const DELETE_OLD_PARKED_INBOX_SQL = `
DELETE FROM temporal_outbox.inbox_parked_events
 WHERE id IN (SELECT id FROM temporal_outbox.inbox_parked_events WHERE parked_at < $1::timestamptz ORDER BY parked_at LIMIT $2)`;

export async function deleteOldParkedInbox(db: SqlExecutor, cutoff: Date, limit: number): Promise<number> {
  return (await db.query(DELETE_OLD_PARKED_INBOX_SQL, [cutoff, limit])).rowCount ?? 0;
}

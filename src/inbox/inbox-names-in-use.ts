import type { SqlExecutor } from '../db/executor';

/** Whether each inbox name has applied anything: one probe of the primary key's prefix per name. */
export const INBOX_NAMES_IN_USE_SQL = `
  SELECT name, EXISTS (SELECT 1 FROM temporal_outbox.inbox_processed_events WHERE consumer = name) AS in_use
    FROM unnest($1::text[]) AS name`;

/** The names among `names` that some consumer has applied events under. */
export async function inboxNamesInUse(db: SqlExecutor, names: string[]): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string; in_use: boolean }>(INBOX_NAMES_IN_USE_SQL, [names]);
  return new Set(rows.filter((r) => r.in_use).map((r) => r.name));
}

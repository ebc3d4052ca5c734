import type { SqlExecutor } from '../../db/executor';

/**
 * The first row at or above an id: one descent of the primary key. Retention uses it to find
 * where to start, to jump over empty key ranges, and to binary-search the end of its walk.
 */
export const OUTBOX_ID_PROBE_SQL = `
  SELECT id, created_at
    FROM temporal_outbox.outbox_events
   WHERE id >= $1::bigint
   ORDER BY id
   LIMIT 1`;

export interface OutboxIdProbe {
  id: number;
  createdAt: Date;
}

export async function probeOutboxId(db: SqlExecutor, atOrAbove: number): Promise<OutboxIdProbe | undefined> {
  const { rows } = await db.query<{ id: string; created_at: Date }>(OUTBOX_ID_PROBE_SQL, [atOrAbove]);
  const row = rows[0];
  return row ? { id: Number(row.id), createdAt: row.created_at } : undefined;
}

export const OUTBOX_MAX_ID_SQL = `SELECT max(id) AS max_id FROM temporal_outbox.outbox_events`;

export async function maxOutboxId(db: SqlExecutor): Promise<number | undefined> {
  const { rows } = await db.query<{ max_id: string | null }>(OUTBOX_MAX_ID_SQL);
  return rows[0]?.max_id == null ? undefined : Number(rows[0].max_id);
}

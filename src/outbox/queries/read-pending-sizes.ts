import type { SqlExecutor } from '../../db/executor';
import { PENDING_ROW_COLUMNS, toPendingRow, type PendingRow, type PendingRowColumns } from './read-pending-rows';

/**
 * Sizes of the given outbox ids that are still pending, in id order, and their bodies too when
 * all of them together are at most `$2` bytes: what lets the relay cut a batch at a byte budget
 * and park a row over Kafka's limit before a large payload reaches the worker's heap, while a
 * batch of small rows (the usual case, at a trickle and under load alike) costs one statement
 * instead of a second one for its bodies. `payload_bytes` is recorded at insert (migration
 * 0040); rows older than that migration are measured here, in PostgreSQL. The window sum runs
 * over the rows found; the body columns are computed only when `small` (a large payload passes
 * the window as a TOAST pointer, unread).
 */
export const READ_PENDING_SIZES_SQL = `
  SELECT e.id,
         e.payload_bytes,
         e.small,
         ${PENDING_ROW_COLUMNS.map(([expression, name]) => `CASE WHEN e.small THEN ${expression} END AS ${name}`).join(',\n         ')}
    FROM (SELECT o.id, o.event_type, o.event_key, o.headers, o.created_at, o.attempts, o.payload,
                 coalesce(o.payload_bytes, octet_length(o.payload::text)) AS payload_bytes,
                 sum(coalesce(o.payload_bytes, octet_length(o.payload::text))) OVER () <= $2::bigint AS small
            FROM temporal_outbox.outbox_events o
           WHERE o.id = ANY($1::bigint[])
             AND o.published_at IS NULL
             AND o.parked_at IS NULL) e
   ORDER BY e.id`;

export interface PendingRowSize {
  id: number;
  payloadBytes: number;
  /** The row's body, when the rows read together were small enough to come with their bodies. */
  row?: PendingRow;
}

export async function readPendingSizes(db: SqlExecutor, ids: number[], bodiesUpToBytes = 0): Promise<PendingRowSize[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<PendingRowColumns & { payload_bytes: number; small: boolean }>(READ_PENDING_SIZES_SQL, [ids, bodiesUpToBytes]);
  return rows.map((r) => ({ id: Number(r.id), payloadBytes: r.payload_bytes, ...(r.small ? { row: toPendingRow(r) } : {}) }));
}

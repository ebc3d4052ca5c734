import type { SqlExecutor } from '../../db/executor';

/**
 * Sizes of the given outbox ids that are still pending, in id order, without their bodies:
 * what lets the relay cut a batch at a byte budget and park a row over Kafka's limit before a
 * single payload reaches the worker's heap. `payload_bytes` is recorded at insert (migration
 * 0040); rows older than that migration are measured here, in PostgreSQL.
 */
export const READ_PENDING_SIZES_SQL = `
  SELECT id,
         coalesce(payload_bytes, octet_length(payload::text)) AS payload_bytes
    FROM outbox_events
   WHERE id = ANY($1::bigint[])
     AND published_at IS NULL
     AND parked_at IS NULL
   ORDER BY id`;

export interface PendingRowSize {
  id: number;
  payloadBytes: number;
}

export async function readPendingSizes(db: SqlExecutor, ids: number[]): Promise<PendingRowSize[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<{ id: string; payload_bytes: number }>(READ_PENDING_SIZES_SQL, [ids]);
  return rows.map((r) => ({ id: Number(r.id), payloadBytes: r.payload_bytes }));
}

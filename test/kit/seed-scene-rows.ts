import type { SqlExecutor } from '../../src/db/executor';

/**
 * The seed's first scene as rows: `perDay` payment_confirmed events a day for `days` days, every
 * one published 50 ms after it was created except the newest `pending` (still NULL) and, spread
 * through the oldest part of the table, `parked` rows that could never be published. Tests
 * use it at 200,000 rows, the scene at 12 million.
 *
 * Rows are generated inside PostgreSQL (generate_series) in id chunks: nothing crosses the
 * wire, and each chunk is one statement the caller can report progress on.
 */
export interface SceneShape {
  rows: number;
  perDay: number;
  pending: number;
  parked: number;
}

export const SEED_CHUNK_SQL = `
  INSERT INTO temporal_outbox.outbox_events (id, event_type, payload, event_key, created_at, published_at, parked_at, attempts, last_error)
  SELECT g,
         'payment_confirmed',
         jsonb_build_object('event_id', 'evt_' || g, 'type', 'payment_confirmed',
                            'account_id', g % 10000 + 1, 'amount', 100 + g % 900),
         (g % 10000 + 1)::text,
         t.created_at,
         CASE WHEN f.pending OR f.parked THEN NULL ELSE t.created_at + interval '50 milliseconds' END,
         CASE WHEN f.parked THEN t.created_at + interval '1 minute' END,
         CASE WHEN f.parked THEN 5 ELSE 1 END,
         CASE WHEN f.parked THEN 'seeded: could never be published' END
    FROM generate_series($1::bigint, $2::bigint) AS g,
         LATERAL (SELECT $7::timestamptz - ($3::bigint - g) * (86400000.0 / $8::float8) * interval '1 millisecond' AS created_at) AS t,
         LATERAL (SELECT g > $3::bigint - $4::bigint AS pending,
                         g % $6::bigint = 0 AND g <= $5::bigint * $6::bigint AS parked) AS f`;

export interface SeedChunk {
  fromId: number;
  toId: number;
}

/** Inserts ids [fromId, toId] of the scene; `now` anchors the newest row, shared by every chunk. */
export async function seedSceneChunk(db: SqlExecutor, shape: SceneShape, chunk: SeedChunk, now: Date): Promise<number> {
  // Parked rows sit every `stride` ids within the oldest quarter, never among the pending tail.
  const stride = Math.max(2, Math.floor(shape.rows / (shape.parked * 4 + 1)));
  const result = await db.query(SEED_CHUNK_SQL, [chunk.fromId, chunk.toId, shape.rows, shape.pending, shape.parked, stride, now, shape.perDay]);
  return result.rowCount ?? 0;
}

/** After seeding explicit ids, producers' inserts must continue above them. */
export async function syncOutboxIdentity(db: SqlExecutor): Promise<void> {
  await db.query(`SELECT setval(pg_get_serial_sequence('temporal_outbox.outbox_events', 'id'), greatest((SELECT max(id) FROM temporal_outbox.outbox_events), 1))`);
}

/** Seeds the whole scene in chunks of `chunkSize`, calling `onChunk` after each. */
export async function seedScene(db: SqlExecutor, shape: SceneShape, opts: { chunkSize?: number; now?: Date; onChunk?: (inserted: number) => void } = {}) {
  const chunkSize = opts.chunkSize ?? 250_000;
  const now = opts.now ?? new Date();
  let inserted = 0;
  for (let fromId = 1; fromId <= shape.rows; fromId += chunkSize) {
    inserted += await seedSceneChunk(db, shape, { fromId, toId: Math.min(shape.rows, fromId + chunkSize - 1) }, now);
    opts.onChunk?.(inserted);
  }
  await syncOutboxIdentity(db);
  return inserted;
}

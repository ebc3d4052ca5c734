import type { SqlExecutor } from './executor';
import { inSchema } from './schema';

// The layout row may not exist yet (no relay has chosen a shard count): the field is recorded
// alone, and the first relay fills in its count (src/outbox/queries/relay-layout.ts).
const RECORD_KEY_FIELD_SQL = `
  INSERT INTO temporal_outbox.outbox_relay_layout AS l (key_field) VALUES ($1::text)
  ON CONFLICT (singleton) DO UPDATE SET key_field = EXCLUDED.key_field, updated_at = now()
  WHERE l.key_field IS DISTINCT FROM EXCLUDED.key_field`;

const READ_KEY_FIELD_SQL = `SELECT key_field FROM temporal_outbox.outbox_relay_layout`;

export function validateKeyField(field: string): string {
  if (typeof field !== 'string' || field.trim() === '' || field.length > 200) {
    throw new Error(`key field must be the name of a payload field (a non-empty string of at most 200 characters), got ${JSON.stringify(field)}`);
  }
  return field;
}

/**
 * Records the payload field a row inserted without a key takes its key from (migrations/0053).
 * Changing it while rows are pending moves the keyless ones' successors to other shards, as a
 * reshard does: set it at setup, before producers write.
 */
export async function recordKeyField(db: SqlExecutor, field: string, schema?: string): Promise<void> {
  await db.query(inSchema(RECORD_KEY_FIELD_SQL, schema), [validateKeyField(field)]);
}

export async function readKeyField(db: SqlExecutor, schema?: string): Promise<string | undefined> {
  const { rows } = await db.query<{ key_field: string | null }>(inSchema(READ_KEY_FIELD_SQL, schema));
  return rows[0]?.key_field ?? undefined;
}

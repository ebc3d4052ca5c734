import type { Pool } from 'pg';

/**
 * An outbox row as a plain-SQL producer writes it: no typed `enqueue`, the payload as given, and
 * the version it was written as in the `event-version` header (none: the type's first version),
 * which is how the relay and consumer pick the schema a row is checked and framed with.
 */
export function insertVersionedRow(pool: Pool, type: string, payload: Record<string, unknown>, version?: number) {
  return pool.query('INSERT INTO temporal_outbox.outbox_events (event_type, payload, headers) VALUES ($1, $2, $3)', [
    type,
    JSON.stringify(payload),
    JSON.stringify(version === undefined ? {} : { 'event-version': String(version) }),
  ]);
}

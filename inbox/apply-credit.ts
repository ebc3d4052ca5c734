import type { Pool } from 'pg';

// The per-event path, literally the seed: record the event id FIRST, then credit, in one
// transaction. A redelivery fails the insert on the primary key, the transaction rolls back
// before any balance changes, and the caller gets a value saying so (not an exception).

/** One validated credit; account id and amount are decimal strings (bigint). */
export interface CreditEvent {
  eventId: string;
  accountId: string;
  amount: string;
}

export type ApplyCreditResult =
  | { applied: true; eventId: string; balance: string }
  | { applied: false; eventId: string; reason: 'duplicate' | 'unknown account' };

const UNIQUE_VIOLATION = '23505';

export const RECORD_EVENT_SQL = 'INSERT INTO inbox_processed_events (consumer, event_id) VALUES ($1, $2)';
export const CREDIT_ACCOUNT_SQL =
  'UPDATE accounts SET balance = balance + $2::bigint, updated_at = now() WHERE account_id = $1::bigint RETURNING balance::text';

export async function applyCredit(pool: Pool, consumer: string, event: CreditEvent): Promise<ApplyCreditResult> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query(RECORD_EVENT_SQL, [consumer, event.eventId]);
    } catch (err) {
      await client.query('ROLLBACK');
      if ((err as { code?: string }).code === UNIQUE_VIOLATION) return { applied: false, eventId: event.eventId, reason: 'duplicate' };
      throw err;
    }
    const { rows } = await client.query<{ balance: string }>(CREDIT_ACCOUNT_SQL, [event.accountId, event.amount]);
    if (rows.length === 0) {
      // No such account: undo the inbox row too, so creating the account and redelivering the
      // event later still credits it once.
      await client.query('ROLLBACK');
      return { applied: false, eventId: event.eventId, reason: 'unknown account' };
    }
    await client.query('COMMIT');
    return { applied: true, eventId: event.eventId, balance: rows[0]!.balance };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

import type { SqlExecutor } from '../db/executor';

// What became of one send attempt of a dead-letter copy. A sent or given-up copy drops the
// message bytes it kept; a copy to retry gets its next due time (the lease set at claim is
// replaced by the backoff).

export type DeadLetterOutcome =
  | { id: string; state: 'sent' }
  | { id: string; state: 'failed'; error: string }
  | { id: string; state: 'pending'; error: string; retryInMs: number };

export const RECORD_DEAD_LETTER_OUTCOMES_SQL = `
UPDATE temporal_outbox.inbox_parked_events p
   SET dead_letter_state   = t.state,
       dead_letter_sent_at = CASE WHEN t.state = 'sent' THEN now() END,
       dead_letter_error   = t.error,
       dead_letter_due_at  = CASE WHEN t.state = 'pending' THEN now() + make_interval(secs => t.retry_in_ms / 1000) END,
       dead_letter_key     = CASE WHEN t.state = 'pending' THEN p.dead_letter_key END,
       dead_letter_value   = CASE WHEN t.state = 'pending' THEN p.dead_letter_value END,
       dead_letter_headers = CASE WHEN t.state = 'pending' THEN p.dead_letter_headers END
  FROM unnest($1::bigint[], $2::text[], $3::text[], $4::double precision[]) AS t(id, state, error, retry_in_ms)
 WHERE p.id = t.id AND p.dead_letter_state = 'pending'`;

export async function recordDeadLetterOutcomes(db: SqlExecutor, outcomes: DeadLetterOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db.query(RECORD_DEAD_LETTER_OUTCOMES_SQL, [
    outcomes.map((o) => o.id),
    outcomes.map((o) => o.state),
    outcomes.map((o) => (o.state === 'sent' ? null : o.error.slice(0, 2000))),
    outcomes.map((o) => (o.state === 'pending' ? o.retryInMs : null)),
  ]);
}

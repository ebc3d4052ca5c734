import { count } from '../format-values';
import { result, type Check, type Problem } from '../types';

// Both read only the partial indexes (parked, pending), so they cost little on a huge table.
export const PARKED_REASONS_SQL = `
  SELECT left(last_error, 120) AS reason, count(*)::int AS rows
    FROM temporal_outbox.outbox_events
   WHERE parked_at IS NOT NULL AND published_at IS NULL
   GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5`;

/** Pending rows written before migration 0042's checks that those checks would refuse now. */
export const PENDING_UNSENDABLE_SQL = `
  SELECT count(*)::int AS rows
    FROM temporal_outbox.outbox_events
   WHERE published_at IS NULL AND parked_at IS NULL
     AND (id > 9007199254740991 OR btrim(event_type) = '')`;

/**
 * Rows producers wrote that the relay cannot send as they are: parked ones, by reason (an
 * event_type that disagrees with payload.type, a missing event id, too large ...), and pending
 * ones that predate the table's checks (an id beyond 2^53, an empty event_type).
 */
export const oddOutboxRowsCheck: Check = async ({ db }) => {
  const reasons = (await db.query<{ reason: string; rows: number }>(PARKED_REASONS_SQL)).rows;
  const unsendable = (await db.query<{ rows: number }>(PENDING_UNSENDABLE_SQL)).rows[0]!.rows;
  const problems: Problem[] = reasons.map((r) => ({
    severity: 'warn',
    message: `${count(r.rows)} parked outbox rows: ${r.reason}`,
    fix: 'npx temporal-outbox relay parked (ids and reasons); fix the rows, then npx temporal-outbox relay redrive --id N (or --all)',
  }));
  if (unsendable > 0) {
    problems.push({
      severity: 'fail',
      message: `${count(unsendable)} pending outbox rows have an id beyond 2^53 or an empty event_type (written before the table checked for them): the relay cannot send them correctly`,
      fix: "find them with SELECT id, event_type FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND (id > 9007199254740991 OR btrim(event_type) = ''); re-insert them with a proper id and type, and delete the originals",
    });
  }
  return result('odd-outbox-rows', 'outbox rows the relay cannot send as they are', [{ label: 'pending rows refused by the table checks', value: unsendable }], problems);
};

import { rowCount, tableStats } from '../table-stats';
import { age, bytes, count } from '../format-values';
import { result, type Check, type Problem } from '../types';

export const INBOX_OLDEST_SQL = `SELECT extract(epoch FROM now() - min(processed_at)) * 1000 AS oldest_ms FROM temporal_outbox.inbox_processed_events`;
export const INBOX_PARKED_SQL = `SELECT count(*) AS parked FROM temporal_outbox.inbox_parked_events WHERE redriven_at IS NULL`;

/**
 * The inbox's size and health. Its ids must outlive every possible redelivery (the horizon), and
 * no longer: an id much older than the horizon means inbox retention is not running.
 */
export const inboxTableCheck: Check = async ({ db, config }) => {
  const stats = await tableStats(db, 'inbox_processed_events');
  if (!stats) {
    return result('inbox-table', 'inbox_processed_events', [], [{ severity: 'fail', message: 'the inbox_processed_events table does not exist', fix: 'npx temporal-outbox migrate' }]);
  }
  const rows = await rowCount(db, 'inbox_processed_events', stats);
  // min(processed_at) reads one entry of the processed_at index.
  const oldest = (await db.query(INBOX_OLDEST_SQL)).rows[0]!.oldest_ms;
  const oldestMs = oldest === null ? null : Number(oldest);
  const parked = Number((await db.query(INBOX_PARKED_SQL)).rows[0]!.parked);
  const horizon = config.inbox.retentionMs;

  const problems: Problem[] = [];
  if (oldestMs !== null && oldestMs > 2 * horizon) {
    problems.push({
      severity: 'fail',
      message: `the oldest processed id is ${age(oldestMs)} old, more than twice the inbox horizon (${age(horizon)}): inbox retention is not running`,
      fix: `npx temporal-outbox retention schedule and a retention worker (npm run worker:retention); the same runs prune the inbox`,
    });
  }
  if (parked > 0) {
    problems.push({
      severity: 'warn',
      message: `${count(parked)} consumed events are parked (could not be applied); they wait for a person`,
      fix: 'npx temporal-outbox inbox parked (reasons); fix the cause, then npx temporal-outbox inbox redrive --id N (or --all)',
    });
  }
  if (stats.deadTuples > 100_000 && stats.deadTuples > stats.liveTuples) {
    problems.push({ severity: 'warn', message: `${count(stats.deadTuples)} dead tuples against ${count(stats.liveTuples)} live ones`, fix: 'VACUUM (ANALYZE) temporal_outbox.inbox_processed_events;' });
  }
  return result(
    'inbox-table',
    'inbox_processed_events',
    [
      { label: rows.exact ? 'rows' : 'rows (estimate)', value: rows.rows, display: count(rows.rows) },
      { label: 'oldest processed id age', value: oldestMs === null ? null : Math.round(oldestMs), display: age(oldestMs) },
      { label: 'horizon', value: horizon, display: age(horizon) },
      { label: 'parked events', value: parked, display: count(parked) },
      { label: 'table size', value: stats.tableBytes, display: bytes(stats.tableBytes) },
      { label: 'index size (all)', value: stats.indexBytes, display: bytes(stats.indexBytes) },
      { label: 'dead tuples', value: stats.deadTuples, display: count(stats.deadTuples) },
      { label: 'last vacuum', value: stats.lastVacuum?.toISOString() ?? null, display: stats.lastVacuum?.toISOString() ?? 'never' },
    ],
    problems,
  );
};

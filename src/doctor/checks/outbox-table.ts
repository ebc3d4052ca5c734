import { rowCount, tableStats } from '../table-stats';
import { age, bytes, count } from '../format-values';
import { result, type Check, type Problem } from '../types';

/** Counting stops here: "more than 100,000 rows past twice the window" says all there is to say. */
const OLD_ROWS_CAP = 100_000;

export const OUTBOX_PENDING_SQL = `
  SELECT count(*) AS pending, extract(epoch FROM now() - min(created_at)) * 1000 AS oldest_ms
    FROM temporal_outbox.outbox_events
   WHERE published_at IS NULL AND parked_at IS NULL`;

export const OUTBOX_PARKED_SQL = `SELECT count(*) AS parked FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL AND published_at IS NULL`;

/** Published rows retention should long have deleted (older than twice the window), capped. */
export const OUTBOX_OVERDUE_SQL = `
  SELECT count(*) AS overdue
    FROM (SELECT 1 FROM temporal_outbox.outbox_events
           WHERE published_at < now() - make_interval(secs => $1::float8 / 1000)
           LIMIT ${OLD_ROWS_CAP}) AS s`;

/** The outbox's size and health: is it as small as the retention window says it should be? */
export const outboxTableCheck: Check = async ({ db, config }) => {
  const stats = await tableStats(db, 'outbox_events');
  if (!stats) {
    return result('outbox-table', 'outbox_events', [], [{ severity: 'fail', message: 'the outbox_events table does not exist', fix: 'npx temporal-outbox migrate' }]);
  }
  const rows = await rowCount(db, 'outbox_events', stats);
  const pending = (await db.query(OUTBOX_PENDING_SQL)).rows[0]!;
  const parked = Number((await db.query(OUTBOX_PARKED_SQL)).rows[0]!.parked);
  const overdueAfterMs = 2 * config.retention.windowMs;
  const overdue = Number((await db.query(OUTBOX_OVERDUE_SQL, [overdueAfterMs])).rows[0]!.overdue);
  const oldestPendingMs = pending.oldest_ms === null ? null : Number(pending.oldest_ms);

  const problems: Problem[] = [];
  if (oldestPendingMs !== null && oldestPendingMs > config.doctor.maxPendingAgeMs) {
    problems.push({
      severity: 'fail',
      message: `the oldest pending event waits for ${age(oldestPendingMs)} (limit ${age(config.doctor.maxPendingAgeMs)}): the relay is stopped or not keeping up`,
      fix: `start the relay worker and its shard workflows, then watch them in the Temporal UI (${config.temporal.uiUrl}); if they run, look at their last failure there`,
    });
  }
  if (overdue > 0) {
    problems.push({
      severity: 'fail',
      message: `${overdue >= OLD_ROWS_CAP ? `more than ${count(OLD_ROWS_CAP)}` : count(overdue)} published rows are older than twice the retention window (${age(overdueAfterMs)}): retention is not running, and the table is far larger than the window implies`,
      fix: `create the retention schedule (npx temporal-outbox retention schedule), run a retention worker (npm run worker:retention), then clear the backlog now: temporal schedule trigger --schedule-id ${config.retention.scheduleId}`,
    });
  }
  if (stats.deadTuples > 100_000 && stats.deadTuples > stats.liveTuples) {
    problems.push({
      severity: 'warn',
      message: `${count(stats.deadTuples)} dead tuples against ${count(stats.liveTuples)} live ones (a large delete not yet vacuumed)`,
      fix: 'VACUUM (ANALYZE) temporal_outbox.outbox_events;  -- autovacuum will get there too; this is sooner',
    });
  }
  return result(
    'outbox-table',
    'outbox_events',
    [
      { label: rows.exact ? 'rows' : 'rows (estimate)', value: rows.rows, display: count(rows.rows) },
      { label: 'pending', value: Number(pending.pending), display: count(Number(pending.pending)) },
      { label: 'parked (dead-lettered)', value: parked, display: count(parked) },
      { label: 'oldest pending age', value: oldestPendingMs === null ? null : Math.round(oldestPendingMs), display: age(oldestPendingMs) },
      { label: `published rows older than ${age(overdueAfterMs)}`, value: overdue, display: overdue >= OLD_ROWS_CAP ? `> ${count(OLD_ROWS_CAP)}` : count(overdue) },
      { label: 'table size', value: stats.tableBytes, display: bytes(stats.tableBytes) },
      { label: 'index size (all)', value: stats.indexBytes, display: bytes(stats.indexBytes) },
      { label: 'dead tuples', value: stats.deadTuples, display: count(stats.deadTuples) },
      { label: 'last vacuum', value: stats.lastVacuum?.toISOString() ?? null, display: stats.lastVacuum?.toISOString() ?? 'never' },
    ],
    problems,
  );
};

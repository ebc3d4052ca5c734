import type { SqlExecutor } from '../db/executor';

/** Sizes from the catalog and tuple counts from the statistics collector: instant at any size. */
export const TABLE_STATS_SQL = `
  SELECT pg_table_size(c.oid)   AS table_bytes,
         pg_indexes_size(c.oid) AS index_bytes,
         c.reltuples::bigint    AS estimated_rows,
         coalesce(s.n_live_tup, 0) AS live_tuples,
         coalesce(s.n_dead_tup, 0) AS dead_tuples,
         greatest(s.last_vacuum, s.last_autovacuum) AS last_vacuum
    FROM pg_class c
    LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
   WHERE c.oid = to_regclass('temporal_outbox.' || $1::text)`;

export interface TableStats {
  tableBytes: number;
  indexBytes: number;
  /** -1 when the table was never analyzed. */
  estimatedRows: number;
  liveTuples: number;
  deadTuples: number;
  lastVacuum: Date | null;
}

export async function tableStats(db: SqlExecutor, table: string): Promise<TableStats | undefined> {
  const { rows } = await db.query(TABLE_STATS_SQL, [table]);
  const r = rows[0];
  if (!r) return undefined;
  return {
    tableBytes: Number(r.table_bytes),
    indexBytes: Number(r.index_bytes),
    estimatedRows: Number(r.estimated_rows),
    liveTuples: Number(r.live_tuples),
    deadTuples: Number(r.dead_tuples),
    lastVacuum: r.last_vacuum,
  };
}

export type WatchedTable = 'outbox_events' | 'inbox_processed_events';

const COUNT_SQL: Record<WatchedTable, string> = {
  outbox_events: 'SELECT count(*) AS n FROM temporal_outbox.outbox_events',
  inbox_processed_events: 'SELECT count(*) AS n FROM temporal_outbox.inbox_processed_events',
};

/** Tables above this many (estimated) rows get the estimate, not a count. */
const EXACT_COUNT_LIMIT = 1_000_000;

/**
 * Exact count while the table is small, the planner's estimate once it is big: count(*) over the
 * seed's 12-million-row outbox is a multi-second scan the doctor should not impose.
 */
export async function rowCount(db: SqlExecutor, table: WatchedTable, stats: TableStats): Promise<{ rows: number; exact: boolean }> {
  if (stats.estimatedRows > EXACT_COUNT_LIMIT) return { rows: stats.estimatedRows, exact: false };
  const { rows } = await db.query<{ n: string }>(COUNT_SQL[table]);
  return { rows: Number(rows[0]!.n), exact: true };
}

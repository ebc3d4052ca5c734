import type { SqlExecutor } from '../../db/executor';

/**
 * Sessions of this database that hold the vacuum horizon back: a snapshot (backend_xmin: a long
 * query, a REPEATABLE READ or SERIALIZABLE transaction) or a transaction id (backend_xid: a
 * transaction that wrote and has not ended), oldest first; and idle-in-transaction sessions,
 * which hold locks even without either. Only this database: since PostgreSQL 14 a session in
 * another database does not hold back vacuum of this one's tables.
 *
 * Another role's sessions show their pid and user only, unless the doctor's role has
 * pg_read_all_stats (docs/vacuum.md).
 */
export const HORIZON_SESSIONS_SQL = `
  SELECT pid,
         usename AS "user",
         application_name,
         state,
         backend_xmin::text AS backend_xmin,
         backend_xid::text AS backend_xid,
         greatest(age(backend_xmin), age(backend_xid)) AS xid_age,
         xact_start,
         extract(epoch FROM clock_timestamp() - xact_start) * 1000 AS xact_age_ms,
         left(query, $1::int) AS query
    FROM pg_stat_activity
   WHERE datname = current_database()
     AND pid <> pg_backend_pid()
     AND backend_type = 'client backend'
     AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL OR state LIKE 'idle in transaction%')
   ORDER BY xact_start NULLS LAST`;

export interface HorizonSession {
  pid: number;
  user: string | null;
  application_name: string | null;
  state: string | null;
  backend_xmin: string | null;
  backend_xid: string | null;
  /** Transactions since its xmin/xid: how far behind it holds the horizon. */
  xid_age: number | null;
  xact_start: Date | null;
  xact_age_ms: number | null;
  query: string | null;
}

export async function readHorizonSessions(db: SqlExecutor, queryChars = 120): Promise<HorizonSession[]> {
  const { rows } = await db.query<HorizonSession>(HORIZON_SESSIONS_SQL, [queryChars]);
  return rows.map((r) => ({ ...r, xact_age_ms: r.xact_age_ms === null ? null : Number(r.xact_age_ms) }));
}

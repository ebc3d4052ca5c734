import type { SqlExecutor } from '../../db/executor';

/**
 * How long the oldest holder of this database's vacuum horizon has held it: a session with a
 * snapshot or a transaction id, or a prepared transaction (seconds; 0 when none). The relay
 * worker exports it as a gauge; the doctor's vacuum-horizon check names the holder. Replication
 * slots have no start time and are left to the doctor.
 */
export const READ_HORIZON_AGE_SQL = `
  SELECT coalesce(greatest(
           (SELECT extract(epoch FROM clock_timestamp() - min(xact_start))
              FROM pg_stat_activity
             WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
               AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)),
           (SELECT extract(epoch FROM clock_timestamp() - min(prepared)) FROM pg_prepared_xacts WHERE database = current_database())
         ), 0) AS age_seconds`;

export async function readHorizonAgeSeconds(db: SqlExecutor): Promise<number> {
  const { rows } = await db.query<{ age_seconds: string }>(READ_HORIZON_AGE_SQL);
  return Number(rows[0]!.age_seconds);
}

import type { SqlExecutor } from '../../db/executor';

/**
 * Prepared (two-phase) transactions of this database. Each one keeps its transaction id running
 * until someone commits or rolls it back, so it holds the vacuum horizon (and its locks) with no
 * session at all: nothing times it out.
 */
export const HORIZON_PREPARED_SQL = `
  SELECT gid,
         transaction::text AS xid,
         age(transaction) AS xid_age,
         owner,
         prepared,
         extract(epoch FROM clock_timestamp() - prepared) * 1000 AS age_ms
    FROM pg_prepared_xacts
   WHERE database = current_database()
   ORDER BY prepared`;

export interface HorizonPrepared {
  gid: string;
  xid: string;
  xid_age: number;
  owner: string;
  prepared: Date;
  age_ms: number;
}

export async function readHorizonPrepared(db: SqlExecutor): Promise<HorizonPrepared[]> {
  const { rows } = await db.query<HorizonPrepared>(HORIZON_PREPARED_SQL);
  return rows.map((r) => ({ ...r, age_ms: Number(r.age_ms) }));
}

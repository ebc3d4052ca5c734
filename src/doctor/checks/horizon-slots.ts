import type { SqlExecutor } from '../../db/executor';

/**
 * Replication slots that hold a horizon. `xmin` (a physical slot fed by a standby with
 * hot_standby_feedback) holds back vacuum of every table in the cluster, the outbox included;
 * `catalog_xmin` (a logical slot) holds back vacuum of the system catalogs only. Both also keep
 * WAL from restart_lsn on.
 */
export const HORIZON_SLOTS_SQL = `
  SELECT slot_name,
         slot_type,
         database,
         active,
         active_pid,
         xmin::text AS xmin,
         catalog_xmin::text AS catalog_xmin,
         age(xmin) AS xmin_age,
         age(catalog_xmin) AS catalog_xmin_age
    FROM pg_replication_slots
   WHERE xmin IS NOT NULL OR catalog_xmin IS NOT NULL
   ORDER BY greatest(age(xmin), age(catalog_xmin)) DESC`;

export interface HorizonSlot {
  slot_name: string;
  slot_type: string;
  database: string | null;
  active: boolean;
  active_pid: number | null;
  xmin: string | null;
  catalog_xmin: string | null;
  xmin_age: number | null;
  catalog_xmin_age: number | null;
}

export async function readHorizonSlots(db: SqlExecutor): Promise<HorizonSlot[]> {
  return (await db.query<HorizonSlot>(HORIZON_SLOTS_SQL)).rows;
}

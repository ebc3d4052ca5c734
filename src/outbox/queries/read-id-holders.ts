import type { SqlExecutor } from '../../db/executor';

/**
 * The transactions that may hold an outbox id they have not committed yet: every nextval on
 * outbox_events' id sequence (an INSERT's default included) takes a RowExclusiveLock on the
 * sequence and keeps it until its transaction ends, prepared transactions included, whether or
 * not the transaction has an xid yet (a plain `SELECT nextval(...)` does not get one, so
 * pg_current_snapshot() alone cannot see it). AccessShareLock is left out: reading the sequence
 * hands out no id. pg_locks needs no privilege. A virtualtransaction is never reused for another
 * transaction, so "no longer listed" means "ended".
 *
 * `ordered` says whether the sequence hands out increasing values in real time (CACHE 1, positive
 * increment): the bound's argument needs it, so the relay reads from the beginning otherwise.
 */
export const READ_ID_HOLDERS_SQL = `
  WITH seq AS (SELECT pg_get_serial_sequence('temporal_outbox.outbox_events', 'id')::regclass AS oid)
  SELECT coalesce((SELECT array_agg(l.virtualtransaction)
                     FROM pg_locks l, seq
                    WHERE l.locktype = 'relation'
                      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND l.relation = seq.oid
                      AND l.mode <> 'AccessShareLock'
                      AND l.virtualtransaction IS NOT NULL), '{}') AS holders,
         coalesce((SELECT s.seqcache = 1 AND s.seqincrement > 0 FROM pg_sequence s, seq WHERE s.seqrelid = seq.oid), false) AS ordered`;

export interface IdHolders {
  holders: string[];
  ordered: boolean;
}

export async function readIdHolders(db: SqlExecutor): Promise<IdHolders> {
  const { rows } = await db.query<{ holders: string[]; ordered: boolean }>(READ_ID_HOLDERS_SQL);
  return { holders: rows[0]!.holders, ordered: rows[0]!.ordered };
}

import type { SqlExecutor } from '../../db/executor';
import { age, count } from '../format-values';
import { result, type Check, type Problem } from '../types';
import { readHorizonPrepared, type HorizonPrepared } from './horizon-prepared';
import { readHorizonSessions, type HorizonSession } from './horizon-sessions';
import { readHorizonSlots, type HorizonSlot } from './horizon-slots';

/** An active slot this many transactions behind is worth a look even when its standby is connected. */
const ACTIVE_SLOT_MAX_XID_AGE = 1_000_000;

export interface HorizonHolders {
  sessions: HorizonSession[];
  slots: HorizonSlot[];
  prepared: HorizonPrepared[];
}

export async function readHorizonHolders(db: SqlExecutor): Promise<HorizonHolders> {
  return { sessions: await readHorizonSessions(db), slots: await readHorizonSlots(db), prepared: await readHorizonPrepared(db) };
}

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;
const holdsSnapshot = (s: HorizonSession) => s.backend_xmin !== null || s.backend_xid !== null;
const idleInTransaction = (s: HorizonSession) => (s.state ?? '').startsWith('idle in transaction');

function describeSession(s: HorizonSession): string {
  const holds = [s.backend_xmin && `backend_xmin ${s.backend_xmin}`, s.backend_xid && `xid ${s.backend_xid}`].filter(Boolean).join(', ');
  const xactAge = s.xact_age_ms === null ? 'unknown' : age(s.xact_age_ms);
  return (
    `pid ${s.pid} (user ${s.user ?? '?'}, application ${JSON.stringify(s.application_name ?? '')}, state ${s.state ?? 'hidden: grant pg_read_all_stats'}, ` +
    `transaction started ${s.xact_start?.toISOString() ?? '?'}, ${xactAge} ago)` +
    (holds ? ` holds ${holds}${s.xid_age !== null ? ` (${count(Number(s.xid_age))} transactions old)` : ''}` : '') +
    (s.query ? `; query: ${JSON.stringify(s.query)}` : '')
  );
}

/** The problems the holders cause, each naming the holder and the one thing that releases it. */
export function horizonProblems(holders: HorizonHolders, maxAgeMs: number): Problem[] {
  const problems: Problem[] = [];
  for (const s of holders.sessions) {
    if (s.xact_age_ms === null || s.xact_age_ms < maxAgeMs) continue;
    const idle = idleInTransaction(s);
    if (!holdsSnapshot(s) && !idle) continue;
    problems.push({
      severity: holdsSnapshot(s) ? 'fail' : 'warn',
      message: holdsSnapshot(s)
        ? `${describeSession(s)}: vacuum cannot remove any row version that died after it, so published outbox rows stay in the pending index and every poll from the beginning walks them`
        : `${describeSession(s)}: idle in a transaction (holds its locks)`,
      fix: idle
        ? `SELECT pg_terminate_backend(${s.pid});  -- and for the future: ALTER ROLE ${quoteIdent(s.user)} SET idle_in_transaction_session_timeout = '5min';`
        : `SELECT pg_terminate_backend(${s.pid});  -- ends that ${s.state ?? ''} transaction; for the future, bound long reports with statement_timeout or run them on a replica without hot_standby_feedback`,
    });
  }
  for (const slot of holders.slots) {
    const dataHorizon = slot.xmin !== null;
    const xidAge = Number(slot.xmin_age ?? slot.catalog_xmin_age ?? 0);
    if (slot.active && xidAge < ACTIVE_SLOT_MAX_XID_AGE) continue;
    problems.push({
      severity: dataHorizon ? 'fail' : 'warn',
      message:
        `replication slot ${slot.slot_name} (${slot.slot_type}${slot.database ? `, database ${slot.database}` : ''}, ${slot.active ? `active, pid ${slot.active_pid}` : 'inactive: nobody consumes it'}) ` +
        (dataHorizon
          ? `holds xmin ${slot.xmin} (${count(xidAge)} transactions old): vacuum of every table, the outbox included, stops there`
          : `holds catalog_xmin ${slot.catalog_xmin} (${count(xidAge)} transactions old): vacuum of the system catalogs stops there, and WAL piles up`),
      fix: slot.active
        ? `on the standby/consumer of ${slot.slot_name}: end its long transaction; or SELECT pg_drop_replication_slot(${quote(slot.slot_name)}); once it is no longer needed`
        : `SELECT pg_drop_replication_slot(${quote(slot.slot_name)});  -- if it is forgotten; otherwise restart what should consume it`,
    });
  }
  for (const p of holders.prepared) {
    if (p.age_ms < maxAgeMs) continue;
    problems.push({
      severity: 'fail',
      message: `prepared transaction ${quote(p.gid)} (xid ${p.xid}, owner ${p.owner}, prepared ${p.prepared.toISOString()}, ${age(p.age_ms)} ago, ${count(Number(p.xid_age))} transactions old) holds the vacuum horizon and its locks until it is committed or rolled back`,
      fix: `ROLLBACK PREPARED ${quote(p.gid)};  -- or COMMIT PREPARED ${quote(p.gid)}; if its coordinator recorded a commit`,
    });
  }
  return problems;
}

function quoteIdent(name: string | null): string {
  return name === null ? '<role>' : `"${name.replace(/"/g, '""')}"`;
}

/**
 * What holds vacuum back: the sessions, slots and prepared transactions older than
 * DOCTOR_MAX_HORIZON_AGE_MS, each named with the statement that releases it.
 */
export const vacuumHorizonCheck: Check = async ({ db, config }) => {
  const holders = await readHorizonHolders(db);
  const { rows } = await db.query<{ timeout: string }>(`SELECT current_setting('idle_in_transaction_session_timeout') AS timeout`);
  const oldest = holders.sessions.filter(holdsSnapshot).reduce<HorizonSession | undefined>((o, s) => ((s.xact_age_ms ?? 0) > (o?.xact_age_ms ?? -1) ? s : o), undefined);
  return result(
    'vacuum-horizon',
    'what holds vacuum back (sessions, replication slots, prepared transactions)',
    [
      { label: 'sessions holding a snapshot or xid', value: holders.sessions.filter(holdsSnapshot).length },
      { label: 'oldest of them', value: oldest ? oldest.pid : null, display: oldest ? `pid ${oldest.pid}, transaction ${age(oldest.xact_age_ms)} old` : '—' },
      { label: 'idle in transaction', value: holders.sessions.filter(idleInTransaction).length },
      { label: 'replication slots holding xmin / catalog_xmin', value: holders.slots.map((s) => s.slot_name).join(', ') || null, display: holders.slots.map((s) => s.slot_name).join(', ') || 'none' },
      { label: 'prepared transactions', value: holders.prepared.length },
      { label: 'threshold (DOCTOR_MAX_HORIZON_AGE_MS)', value: config.doctor.maxHorizonAgeMs, display: age(config.doctor.maxHorizonAgeMs) },
      { label: 'idle_in_transaction_session_timeout', value: rows[0]!.timeout },
    ],
    horizonProblems(holders, config.doctor.maxHorizonAgeMs),
  );
};

import type { SqlExecutor } from '../../db/executor';
import { result, type Check } from '../types';

export const PENDING_INDEX_NAME = 'outbox_events_pending_idx';

/** The statement that creates the relay's partial index without blocking writers. */
export const CREATE_PENDING_INDEX_SQL =
  'CREATE INDEX CONCURRENTLY outbox_events_pending_idx ON temporal_outbox.outbox_events (id) WHERE published_at IS NULL AND parked_at IS NULL;';

export const PENDING_INDEX_SQL = `
  SELECT i.indisvalid AS valid,
         pg_get_indexdef(i.indexrelid) AS definition,
         pg_relation_size(i.indexrelid) AS bytes
    FROM pg_index i
   WHERE i.indexrelid = to_regclass('temporal_outbox.' || $1::text)`;

export interface PendingIndexState {
  exists: boolean;
  valid: boolean;
  partial: boolean;
  definition?: string;
  bytes?: number;
}

export async function pendingIndexState(db: SqlExecutor): Promise<PendingIndexState> {
  const { rows } = await db.query(PENDING_INDEX_SQL, [PENDING_INDEX_NAME]);
  const r = rows[0];
  if (!r) return { exists: false, valid: false, partial: false };
  const definition: string = r.definition;
  const partial = /published_at IS NULL/i.test(definition) && /parked_at IS NULL/i.test(definition);
  return { exists: true, valid: r.valid, partial, definition, bytes: Number(r.bytes) };
}

/** The relay's poll depends on one partial index; without it the poll scans the whole table. */
export const pendingIndexCheck: Check = async ({ db }) => {
  const state = await pendingIndexState(db);
  const facts = [
    { label: 'exists', value: state.exists },
    { label: 'valid', value: state.valid },
    { label: 'definition', value: state.definition ?? null, display: state.definition ?? '—' },
    { label: 'size', value: state.bytes ?? null, display: state.bytes === undefined ? '—' : `${Math.round(state.bytes / 1024)} kB` },
  ];
  if (!state.exists) {
    return result('pending-index', `partial index ${PENDING_INDEX_NAME}`, facts, [
      { severity: 'fail', message: `the relay's partial index ${PENDING_INDEX_NAME} is missing: every poll scans the whole table`, fix: CREATE_PENDING_INDEX_SQL },
    ]);
  }
  if (!state.valid) {
    return result('pending-index', `partial index ${PENDING_INDEX_NAME}`, facts, [
      {
        severity: 'fail',
        message: `${PENDING_INDEX_NAME} is invalid (a CREATE INDEX CONCURRENTLY that failed): the planner ignores it`,
        fix: `DROP INDEX CONCURRENTLY ${PENDING_INDEX_NAME}; ${CREATE_PENDING_INDEX_SQL}`,
      },
    ]);
  }
  if (!state.partial) {
    return result('pending-index', `partial index ${PENDING_INDEX_NAME}`, facts, [
      {
        severity: 'fail',
        message: `${PENDING_INDEX_NAME} is not the partial index the relay needs (it must hold pending rows only)`,
        fix: `DROP INDEX CONCURRENTLY ${PENDING_INDEX_NAME}; ${CREATE_PENDING_INDEX_SQL}`,
      },
    ]);
  }
  return result('pending-index', `partial index ${PENDING_INDEX_NAME}`, facts, []);
};

import { Pool } from 'pg';
import { FETCH_PENDING_IDS_SQL, FROM_THE_BEGINNING } from '../../outbox/queries/fetch-pending-ids';
import { pinPollPlan } from '../../outbox/queries/poll-plan-settings';
import type { SqlExecutor } from '../../db/executor';
import { CREATE_PENDING_INDEX_SQL, PENDING_INDEX_NAME, pendingIndexState } from './pending-index';
import { result, type Check, type Problem } from '../types';
import { horizonProblems, readHorizonHolders } from './vacuum-horizon';

/** The seed's target is 1 ms; past this the poll is worth a look even when it uses the index. */
const SLOW_POLL_MS = 5;
/** EXPLAIN ANALYZE runs the poll; the first run may pay for cold pages, so take the best of a few. */
const RUNS = 3;

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

export interface PollPlan {
  usesPendingIndex: boolean;
  /** Node types touching outbox_events, e.g. ['Index Scan using outbox_events_pending_idx']. */
  access: string[];
  executionMs: number;
  planningMs: number;
}

/**
 * EXPLAIN (ANALYZE, FORMAT JSON) of the relay's own poll text with the relay's own parameters and
 * planner settings (poll-plan-settings.ts: a relay session pins them on its connection), in a
 * transaction of one connection that is rolled back, so the settings end with it.
 */
export async function explainPoll(db: SqlExecutor, params: { shardCount: number; shardIndex: number; limit: number }): Promise<PollPlan> {
  const client = db instanceof Pool ? await db.connect() : undefined;
  const conn: SqlExecutor = client ?? db;
  const runs: PollPlan[] = [];
  try {
    await conn.query('BEGIN');
    await pinPollPlan(conn, 'transaction');
    for (let i = 0; i < RUNS; i++) {
      const { rows } = await conn.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${FETCH_PENDING_IDS_SQL}`, [params.shardCount, params.shardIndex, params.limit, FROM_THE_BEGINNING]);
      const explained = rows[0]!['QUERY PLAN'][0] as { Plan: PlanNode; 'Execution Time': number; 'Planning Time': number };
      const touching = nodes(explained.Plan).filter((n) => n['Relation Name'] === 'outbox_events' || n['Index Name'] !== undefined);
      runs.push({
        usesPendingIndex: touching.some((n) => n['Index Name'] === PENDING_INDEX_NAME),
        access: touching.map((n) => (n['Index Name'] ? `${n['Node Type']} using ${n['Index Name']}` : n['Node Type'])),
        executionMs: explained['Execution Time'],
        planningMs: explained['Planning Time'],
      });
    }
  } finally {
    await conn.query('ROLLBACK').catch(() => undefined);
    client?.release();
  }
  return runs.reduce((best, r) => (r.executionMs < best.executionMs ? r : best));
}

/** Below this the planner rightly prefers a scan to any index. */
const SMALL_TABLE_PAGES = 128;

async function isSmallTable(db: SqlExecutor): Promise<boolean> {
  const { rows } = await db.query<{ pages: string }>(`SELECT pg_relation_size('temporal_outbox.outbox_events') / current_setting('block_size')::int AS pages`);
  return Number(rows[0]!.pages) < SMALL_TABLE_PAGES;
}

async function shardCount(db: SqlExecutor, fallback: number): Promise<number> {
  const { rows } = await db.query<{ shard_count: number }>('SELECT shard_count FROM temporal_outbox.outbox_relay_layout LIMIT 1').catch(() => ({ rows: [] as { shard_count: number }[] }));
  return rows[0]?.shard_count ?? fallback;
}

/** Does the relay's poll (FETCH_PENDING_IDS_SQL, verbatim) read the partial index, and how fast is it? */
export const pollPlanCheck: Check = async ({ db, config }) => {
  const params = { shardCount: await shardCount(db, config.relay.shards), shardIndex: 0, limit: config.relay.batchSize };
  const plan = await explainPoll(db, params);
  const problems: Problem[] = [];
  const index = plan.usesPendingIndex ? undefined : await pendingIndexState(db);
  const small = plan.usesPendingIndex ? false : await isSmallTable(db);
  if (!plan.usesPendingIndex && index?.exists && index.valid && small) {
    // A few pages are cheaper to scan than an index: the planner is right, nothing to fix.
  } else if (!plan.usesPendingIndex) {
    problems.push({
      severity: 'fail',
      message: `the relay's poll does not use ${PENDING_INDEX_NAME} (plan: ${plan.access.join(', ') || 'no table access'}) and takes ${plan.executionMs.toFixed(2)} ms`,
      fix: index?.exists && index.valid ? 'ANALYZE temporal_outbox.outbox_events;  -- stale statistics can hide the partial index from the planner' : CREATE_PENDING_INDEX_SQL,
    });
  } else if (plan.executionMs > SLOW_POLL_MS) {
    // Dead index entries of published rows. VACUUM removes them only if nothing holds the
    // horizon; while something does, advising it is wrong: name the holder instead.
    const [holder] = horizonProblems(await readHorizonHolders(db), config.doctor.maxHorizonAgeMs).filter((p) => p.severity === 'fail');
    problems.push(
      holder
        ? {
            severity: 'warn',
            message: `the relay's poll from the beginning uses ${PENDING_INDEX_NAME} but takes ${plan.executionMs.toFixed(2)} ms: dead entries of published rows that vacuum cannot remove while this holds the horizon: ${holder.message}. The relay's ordinary polls start past them (docs/vacuum.md); only its full scan every RELAY_FULL_SCAN_INTERVAL_MS pays this`,
            fix: `${holder.fix}  -- VACUUM cannot help until then; autovacuum catches up by itself afterwards`,
          }
        : {
            severity: 'warn',
            message: `the relay's poll uses ${PENDING_INDEX_NAME} but takes ${plan.executionMs.toFixed(2)} ms (dead index entries from published rows, and nothing holds the vacuum horizon longer than DOCTOR_MAX_HORIZON_AGE_MS)`,
            fix: 'VACUUM (ANALYZE) temporal_outbox.outbox_events;',
          },
    );
  }
  return result(
    'poll-plan',
    "relay poll from the beginning (FETCH_PENDING_IDS_SQL with no bound, EXPLAIN ANALYZE)",
    [
      { label: 'parameters', value: JSON.stringify(params) },
      { label: `uses ${PENDING_INDEX_NAME}`, value: plan.usesPendingIndex },
      { label: 'plan', value: plan.access.join(', ') },
      { label: `execution time (best of ${RUNS})`, value: Number(plan.executionMs.toFixed(3)), display: `${plan.executionMs.toFixed(3)} ms` },
      { label: 'planning time', value: Number(plan.planningMs.toFixed(3)), display: `${plan.planningMs.toFixed(3)} ms` },
    ],
    problems,
  );
};

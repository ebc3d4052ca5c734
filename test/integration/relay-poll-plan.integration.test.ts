import assert from 'node:assert/strict';
import type { PoolClient } from 'pg';
import { explainPoll } from '../../doctor/checks/poll-plan';
import { FETCH_PENDING_IDS_SQL, FROM_THE_BEGINNING } from '../../outbox/queries/fetch-pending-ids';
import { pinPollPlan } from '../../outbox/queries/poll-plan-settings';
import { createTestDatabase, type TestDatabase } from '../../testkit/database';

// A relay that comes back to a large backlog (an outage, a burst), with statistics that say so.
const BACKLOG = 200_000;
const SHARDS = 8;
const BATCH = 2_000;
const POLL_PARAMS = [SHARDS, 3, BATCH, FROM_THE_BEGINNING];

/** Where the poll's plan reads outbox_events, e.g. ['Index Scan using outbox_events_pending_idx']. */
async function pollAccess(client: PoolClient): Promise<string[]> {
  const { rows } = await client.query(`EXPLAIN (FORMAT JSON) ${FETCH_PENDING_IDS_SQL}`, POLL_PARAMS);
  type Node = { 'Node Type': string; 'Index Name'?: string; 'Relation Name'?: string; Plans?: Node[] };
  const walk = (n: Node): Node[] => [n, ...(n.Plans ?? []).flatMap(walk)];
  return walk(rows[0]['QUERY PLAN'][0].Plan)
    .filter((n) => n['Relation Name'] === 'outbox_events')
    .map((n) => (n['Index Name'] ? `${n['Node Type']} using ${n['Index Name']}` : n['Node Type']));
}

describe('the relay poll’s plan under a large backlog', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    await db.pool.query(
      `INSERT INTO outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'e' || g, 'account_id', g % 1000) FROM generate_series(1, $1::int) g`,
      [BACKLOG],
    );
    await db.pool.query('ANALYZE outbox_events');
  });
  after(async () => db?.drop());

  it('left to the planner it scans the whole table; pinned (as a relay session’s connection is) it walks the pending index, for the same rows', async () => {
    const client = await db.pool.connect();
    try {
      const unpinned = await pollAccess(client);
      assert.ok(!unpinned.some((a) => a.includes('outbox_events_pending_idx')), `the planner's own choice: ${unpinned.join(', ')}`);
      const { rows: expected } = await client.query(FETCH_PENDING_IDS_SQL, POLL_PARAMS);

      await pinPollPlan(client);
      assert.deepEqual(await pollAccess(client), ['Index Scan using outbox_events_pending_idx']);
      const { rows: pinned } = await client.query(FETCH_PENDING_IDS_SQL, POLL_PARAMS);
      assert.equal(pinned.length, BATCH);
      assert.deepEqual(pinned, expected);
    } finally {
      // The settings belong to this connection's session: it goes, rather than back to the pool.
      client.release(true);
    }
  });

  it('the doctor explains the poll as the relay runs it, and its settings end with its transaction', async () => {
    const plan = await explainPoll(db.pool, { shardCount: SHARDS, shardIndex: 3, limit: BATCH });
    assert.equal(plan.usesPendingIndex, true, plan.access.join(', '));
    const client = await db.pool.connect();
    try {
      const { rows } = await client.query(`SELECT current_setting('enable_seqscan') AS seqscan`);
      assert.equal(rows[0].seqscan, 'on');
    } finally {
      client.release();
    }
  });
});

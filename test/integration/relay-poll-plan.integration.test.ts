import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import type { PoolClient } from 'pg';
import { explainPoll } from '../../src/doctor/checks/poll-plan';
import { FETCH_PENDING_IDS_SQL, FROM_THE_BEGINNING } from '../../src/outbox/queries/fetch-pending-ids';
import { pinPollPlan } from '../../src/outbox/queries/poll-plan-settings';
import { startRelays } from '../../src/outbox/relay-control';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { relayTestConfig, startInProcessRelay, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

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

async function insertAnalyzedBacklog(db: TestDatabase): Promise<void> {
  await db.pool.query(
    `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
     SELECT 'payment_confirmed', jsonb_build_object('event_id', 'e' || g, 'account_id', g % 1000, 'amount', 1) FROM generate_series(1, $1::int) g`,
    [BACKLOG],
  );
  await db.pool.query('ANALYZE temporal_outbox.outbox_events');
}

describe('the relay poll’s plan under a large backlog', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
    await insertAnalyzedBacklog(db);
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

  it('a pinned connection does not JIT-compile what it runs besides the poll (the layout read, whose disabled scan looks 10^10 expensive)', async function () {
    const client = await db.pool.connect();
    try {
      if (!(await client.query('SELECT pg_jit_available() AS on')).rows[0].on) this.skip(); // no LLVM in this PostgreSQL: nothing to compile
      const jitOf = async () => {
        const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) SELECT shard_count FROM temporal_outbox.outbox_relay_layout`);
        return rows[0]['QUERY PLAN'][0].JIT as { Functions: number } | undefined;
      };
      // Precondition: the planner settings alone make PostgreSQL compile this one-row read.
      await client.query('BEGIN');
      await client.query(`SELECT set_config('enable_seqscan', 'off', true)`);
      assert.ok((await jitOf())?.Functions, 'with sequential scans disabled and JIT left on, the layout read is compiled');
      await client.query('ROLLBACK');

      await pinPollPlan(client);
      assert.equal(await jitOf(), undefined);
    } finally {
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

// The same backlog relayed by real relay sessions: every poll and count they run on outbox_events
// must walk an index. The table's own scan counters are the witness, since another backend's
// settings cannot be read from SQL. Autovacuum is off for the table so that the statistics keep
// saying "200,000 pending" while it drains, as they do when a relay comes back to a backlog
// before autoanalyze catches up.
describe('relay sessions draining a large analyzed backlog', function () {
  this.timeout(240_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: Awaited<ReturnType<typeof createTestTopic>>;
  let relay: InProcessRelay | undefined;
  const prefix = uniqueName('plan-shard');

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    topic = await createTestTopic(SHARDS);
    await db.pool.query('ALTER TABLE temporal_outbox.outbox_events SET (autovacuum_enabled = false)');
    await insertAnalyzedBacklog(db);
  });
  after(async () => {
    // The worker first: its waiting sessions end with it, not after their workflows are gone.
    await relay?.close();
    for (let i = 0; i < SHARDS; i++) await temporal?.client.workflow.getHandle(`${prefix}-${i}`).terminate('test over').catch(() => undefined);
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  /** Scans of outbox_events as PostgreSQL's statistics have them (flushed by each backend within about a second of going idle). */
  const scans = async () => {
    const { rows } = await db.pool.query(
      `SELECT t.seq_scan::int AS seq, i.idx_scan::int AS pending_index
         FROM pg_stat_user_tables t JOIN pg_stat_user_indexes i ON i.relid = t.relid AND i.indexrelname = 'outbox_events_pending_idx'
        WHERE t.schemaname = 'temporal_outbox' AND t.relname = 'outbox_events'`,
    );
    return rows[0] as { seq: number; pending_index: number };
  };

  it('polls and counts through the pending index, never a sequential scan of the table', async () => {
    const config = relayTestConfig(db.url, topic.topic);
    const control = { client: temporal.client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: BATCH, workflowId: (i: number) => `${prefix}-${i}` };
    // Precondition: left to the planner, this table's poll is a sequential scan (first describe).
    const before = await scans();
    relay = await startInProcessRelay(config);
    await startRelays(control, SHARDS);
    // The test's own drain check runs pinned too, so that only the relay's queries can move seq_scan.
    const checker = await db.pool.connect();
    try {
      await pinPollPlan(checker);
      await eventually(
        'the backlog relayed',
        async () => !(await checker.query('SELECT EXISTS (SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL) AS left')).rows[0].left,
        180_000,
        500,
      );
    } finally {
      checker.release(true);
    }
    // Every batch was one poll at least: wait until the relay's backends have flushed their counters.
    await eventually('the relay’s scans counted', async () => {
      return (await scans()).pending_index - before.pending_index >= BACKLOG / BATCH;
    });
    const after = await scans();
    assert.equal(after.seq - before.seq, 0, `${after.seq - before.seq} sequential scans of outbox_events while the relay drained it (and ${after.pending_index - before.pending_index} of its pending index)`);
  });
});

import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import type { PoolClient } from 'pg';
import { NO_BOUND, PendingScanBound } from '../../activities/relay/pending-scan-bound';
import { pollPendingIds } from '../../activities/relay/poll-pending-ids';
import { HEADERS } from '../../src/kafka/message-format';
import { fetchPendingIds } from '../../src/outbox/queries/fetch-pending-ids';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// The relay's bound under a held vacuum horizon: a REPEATABLE READ snapshot open in another
// session (so published rows stay dead entries in the pending index), events flowing, and a
// transaction that took a low id early and commits late. Sequence order is not commit order:
// the late row must be published, although everything around it was published long before.

const event = (eventId: string, accountId: number) => JSON.stringify({ event_id: eventId, type: 'payment_confirmed', account_id: accountId, amount: 1 });

describe('relay poll bound under a held vacuum horizon (real PostgreSQL, Kafka, Temporal)', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  const sessions: PoolClient[] = [];

  /** A session of its own; rolled back and released in afterEach whatever the test did. */
  const session = async () => {
    const c = await db.pool.connect();
    sessions.push(c);
    return c;
  };
  const holdSnapshot = async () => {
    const reader = await session();
    await reader.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await reader.query('SELECT count(*) FROM temporal_outbox.outbox_events');
    return reader;
  };
  const insertEvents = async (tag: string, n: number) =>
    db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', $1 || '-' || g, 'type', 'payment_confirmed', 'account_id', g % 13, 'amount', 1)
         FROM generate_series(1, $2::int) g`,
      [tag, n],
    );
  const markAllPublished = async () => db.pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = now() WHERE published_at IS NULL AND id <> ALL($1::bigint[])`, [[]]);

  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    for (const c of sessions.splice(0)) {
      await c.query('ROLLBACK').catch(() => undefined);
      c.release();
    }
    await db.drop();
  });

  it('moves past published rows, but never past an id a running transaction holds (nextval without an xid)', async () => {
    await holdSnapshot();
    const bound = new PendingScanBound(3_600_000);
    const poll = () => pollPendingIds(db.pool, bound, { shardCount: 1, shardIndex: 0, limit: 1000 });

    await insertEvents('early', 500);
    assert.equal((await poll()).length, 500);
    await markAllPublished();
    await poll();
    await poll();
    const trustedBefore = bound.snapshot.trusted;
    assert.ok(trustedBefore >= 500, `the bound moves past the published prefix (at ${trustedBefore})`);

    // Takes an id and nothing else: no xid yet, so pg_current_snapshot() would not list it. A
    // nextval that WAL-logs the sequence (every 32 values, and the first after a checkpoint) does
    // assign an xid; that attempt is rolled back and the next one, which does not log, is kept.
    const late = await session();
    const takeIdWithoutXid = async (): Promise<number> => {
      for (let attempt = 0; attempt < 5; attempt++) {
        await late.query('BEGIN');
        const id = Number((await late.query<{ id: string }>(`SELECT nextval(pg_get_serial_sequence('temporal_outbox.outbox_events', 'id')) AS id`)).rows[0]!.id);
        const { rows: xid } = await late.query(`SELECT pg_current_xact_id_if_assigned() AS xid`);
        if (xid[0].xid === null) return id;
        await late.query('ROLLBACK');
      }
      throw new Error('every attempt got an xid');
    };
    const lateId = await takeIdWithoutXid();

    for (let round = 0; round < 5; round++) {
      await insertEvents(`during-${round}`, 200);
      await poll();
      await markAllPublished();
      await poll();
      await poll();
      assert.ok(bound.snapshot.trusted < lateId, `bound ${bound.snapshot.trusted} must stay below the held id ${lateId}`);
    }
    const lastPublished = Number((await db.pool.query(`SELECT max(id) AS m FROM temporal_outbox.outbox_events`)).rows[0].m);
    assert.ok(lastPublished > lateId + 900);

    await late.query(`INSERT INTO temporal_outbox.outbox_events (id, event_type, payload) VALUES ($1, 'payment_confirmed', $2)`, [lateId, event('late-nextval', 1)]);
    await late.query('COMMIT');

    // What a high-water mark ("the last id published") would have read: nothing.
    assert.deepEqual(await fetchPendingIds(db.pool, { shardCount: 1, shardIndex: 0, limit: 100, afterId: lastPublished }), []);
    assert.deepEqual(await poll(), [lateId], 'the bounded poll finds the late row');
    await markAllPublished();
    await poll();
    await poll();
    assert.ok(bound.snapshot.trusted >= lastPublished, 'and moves on once its holder has ended');
  });

  it('a full scan finds a row made pending again below the bound, and pulls the bound down', async () => {
    await holdSnapshot();
    const bound = new PendingScanBound(3_600_000);
    const poll = () => pollPendingIds(db.pool, bound, { shardCount: 1, shardIndex: 0, limit: 1000 });
    await insertEvents('a', 300);
    await poll();
    await markAllPublished();
    await poll();
    await poll();
    assert.ok(bound.snapshot.trusted >= 300);
    await db.pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = NULL WHERE id = 7`);
    assert.deepEqual(await poll(), [], 'below the bound: not seen until a full scan');
    bound.requestFullScan();
    assert.deepEqual(await poll(), [7]);
    assert.equal(bound.snapshot.trusted, 6);
    assert.notEqual(bound.snapshot.trusted, NO_BOUND);
  });

  describe('through a real relay', () => {
    let temporal: { client: Client; connection: Connection };
    let topic: Awaited<ReturnType<typeof createTestTopic>>;
    let relay: InProcessRelay | undefined;
    before(async () => {
      temporal = await testTemporalClient();
    });
    after(async () => temporal?.connection.close());
    beforeEach(async () => {
      topic = await createTestTopic(3);
    });
    afterEach(async () => {
      await terminateStartedShards();
      await relay?.close();
      relay = undefined;
      await topic.remove();
    });

    it('publishes rows whose transactions took low ids early and committed late, while a snapshot is held', async () => {
      // No safety net within the test: only the bound's own argument can find the late rows.
      relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic, { RELAY_FULL_SCAN_INTERVAL_MS: '3600000' }));
      await startShard(temporal.client, relay.taskQueue, { batchSize: 200 });
      await holdSnapshot();
      await insertEvents('before', 1000);
      await eventually('first rows published', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rowCount === 0);

      // One takes its id through the INSERT (it has an xid), the other by nextval alone (no xid).
      const viaInsert = await session();
      await viaInsert.query('BEGIN');
      const insertId = Number((await viaInsert.query<{ id: string }>(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1) RETURNING id`, [event('late-insert', 2)])).rows[0]!.id);
      const viaNextval = await session();
      await viaNextval.query('BEGIN');
      const nextvalId = Number((await viaNextval.query<{ id: string }>(`SELECT nextval(pg_get_serial_sequence('temporal_outbox.outbox_events', 'id')) AS id`)).rows[0]!.id);

      for (let round = 0; round < 5; round++) {
        await insertEvents(`during-${round}`, 400);
        await eventually(`round ${round} published`, async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rowCount === 0);
      }
      assert.equal((await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE id IN ($1, $2)`, [insertId, nextvalId])).rowCount, 0, 'the late rows are not committed yet');

      await viaNextval.query(`INSERT INTO temporal_outbox.outbox_events (id, event_type, payload) VALUES ($1, 'payment_confirmed', $2)`, [nextvalId, event('late-nextval', 3)]);
      await viaNextval.query('COMMIT');
      await viaInsert.query('COMMIT');
      await eventually('late rows published', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE id IN ($1, $2) AND published_at IS NOT NULL`, [insertId, nextvalId])).rowCount === 2, 30_000);

      const onKafka = new Set((await readWholeTopic(topic.topic)).map((m) => m.headers[HEADERS.eventId]));
      assert.ok(onKafka.has('late-insert') && onKafka.has('late-nextval'), 'both late events are on the topic');
      assert.equal(onKafka.size, 1000 + 5 * 400 + 2);
    });

    it('republishes a row an operator set back to pending below the bound, at the next full scan', async () => {
      relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic, { RELAY_FULL_SCAN_INTERVAL_MS: '3000', RELAY_FALLBACK_POLL_MS: '1000' }));
      await startShard(temporal.client, relay.taskQueue, { batchSize: 100 });
      await holdSnapshot();
      await insertEvents('first', 500);
      await eventually('all published', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rowCount === 0);
      await insertEvents('second', 500); // the bound moves past the first 500
      await eventually('all published again', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rowCount === 0);
      const before = (await readWholeTopic(topic.topic)).filter((m) => m.headers[HEADERS.eventId] === 'first-7').length;
      assert.equal(before, 1);

      // By hand, with no notification: only the relay's periodic full scan can find it.
      await db.pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = NULL WHERE payload->>'event_id' = 'first-7'`);
      await eventually('row republished', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rowCount === 0, 60_000);
      const after = (await readWholeTopic(topic.topic)).filter((m) => m.headers[HEADERS.eventId] === 'first-7').length;
      assert.equal(after, 2, 'sent to Kafka a second time');
    });
  });
});

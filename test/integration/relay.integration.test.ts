import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { HEADERS } from '../../src/kafka/message-format';
import { enqueue } from '../../src/outbox/enqueue';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { statusQuery, stopSignal, type RelayShardInput } from '../../workflows/relay/contract';
import { loadConfig } from '../../src/config/env';
import { configuredRelayControl, startRelays } from '../../src/outbox/relay-control';
import { uniqueName } from '../kit/ids';

describe('relay shard workflow (real PostgreSQL, Kafka, Temporal)', function () {
  this.timeout(180_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: Awaited<ReturnType<typeof createTestTopic>>;
  let relay: InProcessRelay | undefined;

  before(async () => {
    temporal = await testTemporalClient();
  });
  after(async () => temporal?.connection.close());
  beforeEach(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
  });
  afterEach(async () => {
    await terminateStartedShards();
    await relay?.close();
    relay = undefined;
    await topic.remove();
    await db.drop();
  });

  const allPublished = async () => {
    const { rows } = await db.pool.query(`SELECT count(*) FILTER (WHERE published_at IS NULL AND parked_at IS NULL) AS pending FROM temporal_outbox.outbox_events`);
    return Number(rows[0].pending) === 0;
  };

  it('publishes rows from enqueue and from plain SQL with key, unchanged value and contract headers', async () => {
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    const handle = await startShard(temporal.client, relay.taskQueue, { batchSize: 50 });
    // A producer in another language: only the seed's columns.
    const plain = { event_id: 'evt-plain-1', type: 'payment_confirmed', account_id: 42, amount: 500 };
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [JSON.stringify(plain)]);
    const viaApi = await enqueue(db.pool, { eventType: 'order_shipped', payload: { order: 7 }, key: 'order-7', headers: { traceparent: 't-1' } });

    await eventually('both rows published', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rowCount === 0);
    const messages = await readWholeTopic(topic.topic);
    assert.equal(messages.length, 2);
    const byId = new Map(messages.map((m) => [m.headers[HEADERS.eventId], m]));
    const p = byId.get('evt-plain-1')!;
    assert.equal(p.key, '42', 'key falls back to payload.account_id');
    assert.deepEqual(JSON.parse(p.value), plain);
    assert.equal(p.headers[HEADERS.eventType], 'payment_confirmed');
    const { rows } = await db.pool.query(`SELECT id, created_at FROM temporal_outbox.outbox_events ORDER BY id`);
    assert.equal(p.headers[HEADERS.createdAt], rows[0].created_at.toISOString());
    assert.equal(p.headers[HEADERS.outboxId], String(rows[0].id));
    const a = byId.get(viaApi.eventId)!;
    assert.equal(a.key, 'order-7');
    assert.equal(a.headers.traceparent, 't-1');
    assert.deepEqual(JSON.parse(a.value), { event_id: viaApi.eventId, order: 7 });

    // The counters arrive with the end of the relay session that published the rows (it ends once
    // the shard is drained): a moment after the rows are marked.
    await eventually('status counts both', async () => (await handle.query(statusQuery)).published === 2);
    await handle.signal(stopSignal);
    const result = await handle.result();
    assert.equal(result.published, 2);
  });

  it('continues as new every few batches without losing or repeating an event, carrying its counters', async () => {
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'evt-' || g, 'type', 'payment_confirmed', 'account_id', g % 7, 'amount', 1)
         FROM generate_series(1, 300) g`,
    );
    const handle = await startShard(temporal.client, relay.taskQueue, { batchSize: 20, maxBatchesPerRun: 3 });
    // More rows while it runs, across several continue-as-new boundaries.
    for (let i = 301; i <= 400; i += 10) {
      await db.pool.query(
        `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
         SELECT 'payment_confirmed', jsonb_build_object('event_id', 'evt-' || g, 'type', 'payment_confirmed', 'account_id', g % 7, 'amount', 1)
           FROM generate_series($1::int, $1::int + 9) g`,
        [i],
      );
      await new Promise((r) => setTimeout(r, 100));
    }
    await eventually('every row published', allPublished);
    const messages = await readWholeTopic(topic.topic);
    const ids = messages.map((m) => m.headers[HEADERS.eventId]);
    assert.equal(ids.length, 400, 'no event lost, none sent twice');
    assert.equal(new Set(ids).size, 400);
    await eventually('status caught up', async () => (await handle.query(statusQuery)).published === 400);
    const status = await handle.query(statusQuery);
    assert.ok(status.runs >= 6, `expected several continue-as-new runs, got ${status.runs}`);
    assert.ok(status.batches >= 20);
    const { rows } = await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL`);
    assert.equal(Number(rows[0].n), 400);
  });

  it('keeps a drained session for more rows for its grace: a trickle with shorter pauses needs no wake per row', async () => {
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    const handle = await startShard(temporal.client, relay.taskQueue, {});
    const scheduled = async (activity: string) =>
      ((await handle.fetchHistory()).events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity).length;
    const sendAndWait = async (n: number) => {
      await enqueue(db.pool, { eventType: 't', payload: { n }, key: `k-${n}` });
      await eventually(`row ${n} published`, allPublished, 20_000, 50);
    };
    // The default grace (10 s): rows 3 s apart all go out in the shard's first session.
    await sendAndWait(1);
    for (const n of [2, 3, 4]) {
      await new Promise((r) => setTimeout(r, 3_000));
      await sendAndWait(n);
    }
    assert.equal(await scheduled('relayShardSession'), 1, 'one session published the whole trickle');
    assert.equal(await scheduled('waitForPendingEvents'), 0, 'the shard never went to its idle wait in between');
    // A pause longer than the grace: the shard goes idle, and the next row wakes a new session.
    await eventually('the shard idle', async () => (await handle.query(statusQuery)).state === 'idle', 30_000, 100);
    await sendAndWait(5);
    assert.equal(await scheduled('relayShardSession'), 2);
    const messages = await readWholeTopic(topic.topic);
    assert.deepEqual(messages.map((m) => JSON.parse(m.value).n).sort(), [1, 2, 3, 4, 5]);
  });

  it('gives the shards it starts the configured idle wait and drain grace (RELAY_IDLE_WAIT_MS, RELAY_DRAIN_GRACE_MS)', async () => {
    const config = loadConfig({ ...process.env, RELAY_IDLE_WAIT_MS: '45000', RELAY_DRAIN_GRACE_MS: '4000' });
    const workflowId = uniqueName('configured-shard');
    // A task queue no worker polls: only the start's recorded input matters here.
    const control = configuredRelayControl(config, temporal.client, db.pool, { taskQueue: uniqueName('nobody'), workflowId: () => workflowId });
    await startRelays(control, 1);
    const handle = temporal.client.workflow.getHandle(workflowId);
    try {
      const [started] = (await handle.fetchHistory()).events ?? [];
      const payload = started!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
      const input = JSON.parse(Buffer.from(payload.data!).toString()) as RelayShardInput;
      assert.equal(input.idleWaitMs, 45_000);
      assert.equal(input.drainGraceMs, 4_000);
    } finally {
      await handle.terminate('test finished').catch(() => undefined);
    }
  });

  it('gives the next session the connection the last one left, holding no lock in between', async () => {
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    const handle = await startShard(temporal.client, relay.taskQueue, { drainGraceMs: 300 });
    // A kept connection's last statement is the release of its locks. (The shard reports idle once
    // its session has ended, and a session gives its connection back before it ends.)
    const kept = async () =>
      (
        await db.pool.query<{ pid: number; advisory_locks: string }>(
          `SELECT a.pid, (SELECT count(*) FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory') AS advisory_locks
             FROM pg_stat_activity a
            WHERE a.datname = current_database() AND a.state = 'idle' AND a.query = 'SELECT pg_advisory_unlock_all()'`,
        )
      ).rows;
    const publishOne = async (n: number) => {
      await enqueue(db.pool, { eventType: 't', payload: { n }, key: `k-${n}` });
      await eventually(`row ${n} published`, allPublished, 20_000, 50);
      await eventually('the shard idle', async () => (await handle.query(statusQuery)).state === 'idle', 20_000, 50);
    };
    await publishOne(1);
    const [first, ...others] = await kept();
    assert.ok(first, 'the session left its connection to be kept');
    assert.equal(others.length, 0);
    assert.equal(Number(first.advisory_locks), 0, 'the kept connection holds no shard lock');
    await publishOne(2);
    const after = await kept();
    assert.deepEqual(after.map((k) => k.pid), [first.pid], 'the second session ran on the same connection and left it again');
    assert.equal(Number(after[0]!.advisory_locks), 0);
  });
});

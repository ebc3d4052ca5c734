import assert from 'node:assert/strict';
import { WorkflowExecutionAlreadyStartedError, WorkflowFailedError, type Client, type Connection } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { HEADERS } from '../../src/kafka/message-format';
import { enqueue } from '../../src/outbox/enqueue';
import { listParked, redriveParked } from '../../src/outbox/queries/parked-rows';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { RELAY_FAILURES, statusQuery, stopSignal } from '../../workflows/relay/contract';

describe('relay guarantees: poison rows, order per key, one relay per shard', function () {
  this.timeout(180_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: InProcessRelay | undefined;

  before(async () => {
    temporal = await testTemporalClient();
  });
  after(async () => temporal?.connection.close());
  beforeEach(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await terminateStartedShards();
    await relay?.close();
    relay = undefined;
    await topic?.remove();
    await db.drop();
  });

  const pendingCount = async () =>
    Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL`)).rows[0].n);

  it('parks malformed and oversized rows at once with their reason; good rows of every key flow; redrive republishes', async () => {
    topic = await createTestTopic(3);
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic, { KAFKA_MAX_MESSAGE_BYTES: '20000' }));
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload, event_key) VALUES
      ('payment_confirmed', '[1,2,3]', 'k1'),
      ('payment_confirmed', '{"type":"payment_confirmed","account_id":1}', 'k1'),
      ('payment_confirmed', jsonb_build_object('event_id', 'big', 'blob', repeat('x', 30000)), 'k2'),
      ('payment_confirmed', '{"event_id":"good-1","account_id":1}', 'k1'),
      ('payment_confirmed', '{"event_id":"good-2","account_id":2}', 'k2')`);
    await startShard(temporal.client, relay.taskQueue, { batchSize: 10 });
    await eventually('nothing pending', async () => (await pendingCount()) === 0);

    const parked = await listParked(db.pool);
    assert.deepEqual(parked.map((p) => p.messageKey), ['k1', 'k1', 'k2']);
    assert.match(parked[0]!.lastError!, /payload must be a JSON object, got array/);
    assert.match(parked[1]!.lastError!, /event_id must be a non-empty string/);
    assert.match(parked[2]!.lastError!, /exceeds the 20000-byte Kafka limit/);
    let messages = await readWholeTopic(topic.topic);
    assert.deepEqual(messages.map((m) => m.headers[HEADERS.eventId]).sort(), ['good-1', 'good-2']);

    // The operator fixes the payload and re-drives it.
    await db.pool.query(`UPDATE temporal_outbox.outbox_events SET payload = payload || '{"event_id":"fixed-1"}' WHERE id = $1`, [parked[1]!.id]);
    assert.deepEqual(await redriveParked(db.pool, [parked[1]!.id]), [parked[1]!.id]);
    await eventually('redriven row published', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE id = $1 AND published_at IS NOT NULL`, [parked[1]!.id])).rowCount === 1, 30_000);
    messages = await readWholeTopic(topic.topic);
    assert.deepEqual(messages.map((m) => m.headers[HEADERS.eventId]).sort(), ['fixed-1', 'good-1', 'good-2']);
    assert.equal((await listParked(db.pool)).length, 2);
  });

  // Batch size 2: the first batch (a-1, a-2-big) is full, so the session polls the next one
  // (a-3, b-1) while it is sent; that poll skipped a-2, so it must be dropped when a-2 is refused.
  for (const batchSize of [10, 2]) {
    it(`retries a row the broker refuses a bounded number of times, then parks it; its key waits, other keys flow (batch size ${batchSize})`, async () => {
      // The topic accepts less than the relay believes: Kafka itself refuses the big row.
      topic = await createSmallMessageTopic(4096);
      relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic, { RELAY_MAX_ATTEMPTS: '3' }));
      await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload, event_key) VALUES
        ('t', '{"event_id":"a-1"}', 'a'),
        ('t', jsonb_build_object('event_id', 'a-2-big', 'blob', repeat('x', 10000)), 'a'),
        ('t', '{"event_id":"a-3"}', 'a'),
        ('t', '{"event_id":"b-1"}', 'b'),
        ('t', '{"event_id":"b-2"}', 'b')`);
      await startShard(temporal.client, relay.taskQueue, { batchSize });
      await eventually('nothing pending', async () => (await pendingCount()) === 0, 90_000);

      const parked = await listParked(db.pool);
      assert.equal(parked.length, 1);
      assert.equal(parked[0]!.attempts, 3, 'parked after exactly RELAY_MAX_ATTEMPTS refusals');
      assert.match(parked[0]!.lastError!, /kafka refused the message/i);
      const messages = await readWholeTopic(topic.topic);
      const sent = messages.map((m) => m.headers[HEADERS.eventId]);
      assert.deepEqual([...sent].sort(), ['a-1', 'a-3', 'b-1', 'b-2']);
      const a = messages.filter((m) => m.key === 'a').map((m) => m.headers[HEADERS.eventId]);
      assert.deepEqual(a, ['a-1', 'a-3']);
      // a-2 never reaches Kafka, so the topic alone cannot show a-3 waited: the table can.
      const { rows } = await db.pool.query(`SELECT (SELECT published_at FROM temporal_outbox.outbox_events WHERE payload->>'event_id' = 'a-3') >= (SELECT parked_at FROM temporal_outbox.outbox_events WHERE payload->>'event_id' = 'a-2-big') AS waited`);
      assert.equal(rows[0].waited, true, 'a-3 was published only after a-2 was parked');
    });
  }

  it('publishes each key in commit order while concurrent producers commit out of id order', async () => {
    topic = await createTestTopic(4);
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    await startShard(temporal.client, relay.taskQueue, { shardIndex: 0, shardCount: 2, batchSize: 25 });
    await startShard(temporal.client, relay.taskQueue, { shardIndex: 1, shardCount: 2, batchSize: 25 });
    await db.pool.query(`CREATE TABLE key_sequence (key text PRIMARY KEY, n int NOT NULL DEFAULT 0)`);
    const keys = ['k0', 'k1', 'k2', 'k3', 'k4'];
    await db.pool.query(`INSERT INTO key_sequence (key) SELECT unnest($1::text[])`, [keys]);

    // Each transaction enqueues first (taking its id), dawdles, then takes the key's sequence
    // number: without enqueue's per-key lock, ids and commit order would diverge here.
    const producer = async (worker: number) => {
      for (let i = 0; i < 25; i++) {
        const key = keys[(worker + i) % keys.length]!;
        const client = await db.pool.connect();
        try {
          await client.query('BEGIN');
          const { id } = await enqueue(client, { eventType: 'seq', payload: { worker }, key });
          await new Promise((r) => setTimeout(r, Math.random() * 5));
          const { rows } = await client.query(`UPDATE key_sequence SET n = n + 1 WHERE key = $1 RETURNING n`, [key]);
          await client.query(`UPDATE temporal_outbox.outbox_events SET payload = payload || jsonb_build_object('seq', $2::int) WHERE id = $1`, [id, rows[0].n]);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(producer));
    await eventually('all 200 published', async () => (await pendingCount()) === 0);

    // In the table: for each key, id order (the order the relay publishes in) is commit order.
    const { rows: byId } = await db.pool.query(`SELECT event_key, array_agg((payload->>'seq')::int ORDER BY id) AS seqs FROM temporal_outbox.outbox_events GROUP BY event_key`);
    for (const r of byId) assert.deepEqual(r.seqs, r.seqs.map((_: number, i: number) => i + 1), `key ${r.event_key}: ids out of commit order: ${r.seqs.join(',')}`);
    // On Kafka: each key's messages, in partition order, carry 1, 2, 3 ... in commit order.
    const messages = await readWholeTopic(topic.topic);
    assert.equal(messages.length, 200);
    for (const key of keys) {
      const seqs = messages.filter((m) => m.key === key).map((m) => JSON.parse(m.value).seq as number);
      assert.equal(seqs.length, 40, `key ${key}: all 40 events on the topic`);
      assert.deepEqual(seqs, seqs.map((_, i) => i + 1), `key ${key} out of commit order: ${seqs.join(',')}`);
    }
  });

  it('the per-key lock is what orders them: two transactions of one key commit in id order with it, in reverse without it', async () => {
    await db.pool.query(`CREATE TABLE key_sequence (key text PRIMARY KEY, n int NOT NULL DEFAULT 0)`);
    await db.pool.query(`INSERT INTO key_sequence (key) VALUES ('locked'), ('unlocked')`);
    const a = await db.pool.connect();
    const b = await db.pool.connect();
    const takeSeq = async (client: typeof a, id: number, key: string) => {
      const { rows } = await client.query(`UPDATE key_sequence SET n = n + 1 WHERE key = $1 RETURNING n`, [key]);
      await client.query(`UPDATE temporal_outbox.outbox_events SET payload = payload || jsonb_build_object('seq', $2::int) WHERE id = $1`, [id, rows[0].n]);
    };
    // The same interleaving both times: A enqueues first, then B enqueues, B tries to finish first.
    const interleave = async (key: string, serializeKey: boolean) => {
      await a.query('BEGIN');
      await b.query('BEGIN');
      const first = await enqueue(a, { eventType: 'seq', payload: {}, key, serializeKey });
      let bEnqueued = false;
      const second = enqueue(b, { eventType: 'seq', payload: {}, key, serializeKey }).then((r) => ((bEnqueued = true), r));
      await new Promise((r) => setTimeout(r, 500));
      const bWaited = !bEnqueued;
      if (bEnqueued) {
        // Nothing holds B back: it takes the key's next number and commits before A.
        await takeSeq(b, (await second).id, key);
        await b.query('COMMIT');
        await takeSeq(a, first.id, key);
        await a.query('COMMIT');
      } else {
        await takeSeq(a, first.id, key);
        await a.query('COMMIT');
        await takeSeq(b, (await second).id, key);
        await b.query('COMMIT');
      }
      const { rows } = await db.pool.query(`SELECT (payload->>'seq')::int AS seq FROM temporal_outbox.outbox_events WHERE event_key = $1 ORDER BY id`, [key]);
      return { bWaited, seqsInIdOrder: rows.map((r) => r.seq) };
    };
    try {
      assert.deepEqual(await interleave('locked', true), { bWaited: true, seqsInIdOrder: [1, 2] }, 'with the lock B waits for A: id order is commit order');
      assert.deepEqual(await interleave('unlocked', false), { bWaited: false, seqsInIdOrder: [2, 1] }, 'without it B commits first: id order is not commit order');
    } finally {
      a.release();
      b.release();
    }
  });

  it('refuses a second relay for a shard (fixed workflow id) and a relay of another shard count (layout)', async () => {
    topic = await createTestTopic(1);
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    const workflowId = uniqueName('outbox-relay-shard-0');
    await startShard(temporal.client, relay.taskQueue, { shardIndex: 0, shardCount: 2 }, workflowId);
    await assert.rejects(startShard(temporal.client, relay.taskQueue, { shardIndex: 0, shardCount: 2 }, workflowId), WorkflowExecutionAlreadyStartedError);

    await eventually('layout recorded', async () => (await db.pool.query(`SELECT shard_count FROM temporal_outbox.outbox_relay_layout`)).rows[0]?.shard_count === 2);
    const stray = await startShard(temporal.client, relay.taskQueue, { shardIndex: 0, shardCount: 3 });
    const err = await stray.result().then(() => undefined, (e: unknown) => e);
    assert.ok(err instanceof WorkflowFailedError, `expected the stray relay to fail, got ${String(err)}`);
    // Remote activities wrap it in an ActivityFailure; a local activity's reaches the workflow as is.
    let failure: unknown = err.cause;
    while (failure instanceof Error && !(failure instanceof ApplicationFailure)) failure = failure.cause;
    assert.ok(failure instanceof ApplicationFailure, `expected an ApplicationFailure in ${String(err.cause)}`);
    assert.equal(failure.type, RELAY_FAILURES.layoutMismatch);
    assert.equal(failure.nonRetryable, true);
  });

  it('stops on the stop signal even while idle, returning its counters', async () => {
    topic = await createTestTopic(1);
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    const handle = await startShard(temporal.client, relay.taskQueue, { batchSize: 10 });
    await enqueue(db.pool, { eventType: 't', payload: { n: 1 }, key: 'x' });
    await eventually('published', async () => (await pendingCount()) === 0);
    await eventually('idle', async () => (await handle.query(statusQuery)).state === 'idle');
    const started = Date.now();
    await handle.signal(stopSignal);
    const result = await handle.result();
    assert.equal(result.published, 1);
    assert.ok(Date.now() - started < 15_000, 'an idle relay stops without waiting out its 60 s wait');
  });
});

async function createSmallMessageTopic(maxMessageBytes: number) {
  const topic = uniqueName('test-topic-small');
  const admin = testKafka().admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: String(maxMessageBytes) }] }],
  });
  await admin.disconnect();
  return {
    topic,
    async remove() {
      const a = testKafka().admin();
      await a.connect();
      await a.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await a.disconnect();
    },
  };
}

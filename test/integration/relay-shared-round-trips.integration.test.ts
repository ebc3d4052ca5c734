import assert from 'node:assert/strict';
import type { Producer } from 'kafkajs';
import { createSharedRoundTrips, type SharedRoundTrips } from '../../activities/relay/shared-round-trips';
import { loadConfig } from '../../src/config/env';
import { createRelayProducer } from '../../src/kafka/relay-producer';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { createTestTopic, testKafka } from '../kit/kafka';

// The relay's shards of one worker share their small round trips: calls made in the same turn
// leave as one statement or one Kafka request. Against real PostgreSQL and Kafka: each caller
// gets back exactly its own rows and counts, and a merged send puts every caller's messages on
// the topic.
describe('relay shared round trips: shards of one worker share statements and Kafka requests', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let producer: Producer;
  let topic: { topic: string; remove(): Promise<void> };
  let trips: SharedRoundTrips;
  const ids: number[] = [];

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(2);
    producer = createRelayProducer(testKafka());
    await producer.connect();
    // A 64 KiB batch budget: reads whose rows add up to more come without bodies.
    trips = createSharedRoundTrips(db.pool, producer, loadConfig({ ...process.env, RELAY_BATCH_MAX_BYTES: String(64 * 1024) }));
    for (let i = 1; i <= 4; i++) {
      const payload = { event_id: `shared-${i}`, type: 'payment_confirmed', account_id: i, amount: i };
      ids.push(Number((await db.pool.query<{ id: string }>(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1) RETURNING id`, [payload])).rows[0]!.id));
    }
  });
  after(async () => {
    await producer?.disconnect().catch(() => undefined);
    await topic?.remove().catch(() => undefined);
    await db?.drop();
  });

  it('hands each caller of a shared read its own rows, with bodies when the rows together are small', async () => {
    const [a, b] = await Promise.all([trips.readSizes([ids[0]!, ids[1]!]), trips.readSizes([ids[2]!])]);
    assert.deepEqual(a.map((r) => r.id), [ids[0], ids[1]]);
    assert.deepEqual(b.map((r) => r.id), [ids[2]]);
    assert.deepEqual([...a, ...b].map((r) => r.row?.eventId), ['shared-1', 'shared-2', 'shared-3']);
    assert.ok(a.every((r) => r.payloadBytes > 0));

    const big = (await db.pool.query<{ id: string }>(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1) RETURNING id`, [{ event_id: 'shared-big', type: 'payment_confirmed', account_id: 9, amount: 1, pad: 'x'.repeat(70_000) }])).rows[0]!.id;
    const sized = await trips.readSizes([Number(big)]);
    assert.equal(sized.length, 1);
    assert.equal(sized[0]!.row, undefined, 'over the budget: the size alone, the body read later within it');
    await db.pool.query('DELETE FROM temporal_outbox.outbox_events WHERE id = $1', [big]);
  });

  it('marks the rows of every caller of a shared mark and tells each its own count', async () => {
    const pendingBefore = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL');
    assert.equal(pendingBefore.rows[0]!.n, 4);
    const counts = await Promise.all([trips.markPublished([ids[0]!, ids[1]!]), trips.markPublished([ids[2]!])]);
    assert.deepEqual(counts, [2, 1]);
    const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM temporal_outbox.outbox_events WHERE published_at IS NULL ORDER BY id');
    assert.deepEqual(rows.map((r) => Number(r.id)), [ids[3]], 'the fourth row, in no call, stays pending');
  });

  it('puts the messages of every caller of a shared send on the topic', async () => {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      const onTopic = async () => (await admin.fetchTopicOffsets(topic.topic)).reduce((sum, p) => sum + Number(p.high), 0);
      assert.equal(await onTopic(), 0);
      const message = (key: string) => ({ key, value: JSON.stringify({ key }) });
      await Promise.all([
        trips.send({ topicMessages: [{ topic: topic.topic, messages: [message('a'), message('b')] }], bytes: 64 }),
        trips.send({ topicMessages: [{ topic: topic.topic, messages: [message('c')] }], bytes: 32 }),
      ]);
      assert.equal(await onTopic(), 3);
    } finally {
      await admin.disconnect();
    }
  });
});

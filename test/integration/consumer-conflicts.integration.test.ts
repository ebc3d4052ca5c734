import assert from 'node:assert/strict';
import { consumerEnv, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// A redelivered event id whose payload differs from the applied one is a conflict: parked with
// both versions, never silently absorbed. Identical redeliveries stay silent no-ops. Both within
// one batch (same chunk) and across batches (after the first version was applied).
describe('consumer: conflicting duplicates are parked, identical ones absorbed', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const group = uniqueName('conflict-group');
  const kafka = testKafka();

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(1);
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (1, 0), (2, 0)');
  });
  after(async () => {
    await consumer?.stop();
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [`${topic.topic}.dlq`] }).catch(() => undefined);
    await admin.disconnect();
    await topic?.remove();
    await db?.drop();
  });

  const balances = async () => (await db.pool.query('SELECT account_id::int, balance::int FROM accounts ORDER BY account_id')).rows;
  const parked = async () =>
    (await db.pool.query<{ event_id: string; reason: string; raw_value: string; applied_value: string | null; applied_payload_hash: string | null }>(
      'SELECT event_id, reason, raw_value, applied_value, applied_payload_hash FROM temporal_outbox.inbox_parked_events ORDER BY kafka_offset',
    )).rows;

  it('within one batch: the first version is applied, an identical repeat is a duplicate, a different one is parked beside it', async () => {
    // Produced before the worker starts, on one partition: they arrive in one chunk, one batch.
    await produceEvents(kafka, topic.topic, [
      { event_id: 'evt-a', account_id: 1, amount: 100 },
      { event_id: 'evt-a', account_id: 1, amount: 100 },
      { event_id: 'evt-a', account_id: 1, amount: 900 },
      { event_id: 'evt-b', account_id: 2, amount: 5 },
    ]);
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('conflict-queue'), partitions: 1 }));
    await waitUntilRunning(consumer);
    await eventually('the first batch consumed', () => groupCaughtUp(kafka, group, topic.topic));

    assert.deepEqual(await balances(), [
      { account_id: 1, balance: 100 },
      { account_id: 2, balance: 5 },
    ]);
    const rows = await parked();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.event_id, 'evt-a');
    assert.match(rows[0]!.reason, /^conflicting duplicate: event id delivered again in this batch \(first at .*\/0@0\) with a different payload$/);
    assert.match(rows[0]!.raw_value, /"amount":900\b/, 'the conflicting version');
    assert.match(rows[0]!.applied_value ?? '', /"amount":100\b/, 'the applied version beside it');
    const batches = consumer.logs.filter((l) => l.msg === 'batch applied');
    assert.equal(batches.reduce((n, l) => n + (l.duplicates as number), 0), 1, 'the identical repeat is a plain duplicate');
    assert.equal(batches.reduce((n, l) => n + (l.conflicts as number), 0), 1);
  });

  it('across batches: an identical redelivery is silent, a different payload for an applied id is parked with the applied hash', async () => {
    const hashBefore = (await db.pool.query(`SELECT payload_hash FROM temporal_outbox.inbox_processed_events WHERE event_id = 'evt-a'`)).rows[0].payload_hash as string;
    assert.match(hashBefore, /^[0-9a-f]{32}$/, 'the inbox row keeps the applied payload hash');

    await produceEvents(kafka, topic.topic, [{ event_id: 'evt-a', account_id: 1, amount: 100 }]);
    await eventually('the identical redelivery consumed', () => groupCaughtUp(kafka, group, topic.topic));
    assert.equal((await parked()).length, 1, 'nothing new parked for an identical redelivery');

    await produceEvents(kafka, topic.topic, [{ event_id: 'evt-a', account_id: 2, amount: 100 }]);
    await eventually('the conflicting redelivery consumed', () => groupCaughtUp(kafka, group, topic.topic));
    const rows = await parked();
    assert.equal(rows.length, 2);
    const conflict = rows[1]!;
    assert.equal(conflict.event_id, 'evt-a');
    assert.equal(conflict.reason, `conflicting duplicate: event id already applied with a different payload (applied payload hash ${hashBefore}, this one ${JSON.parse(conflict.raw_value).payload_hash})`);
    assert.equal(conflict.applied_payload_hash, hashBefore);
    assert.match(conflict.raw_value, /"account_id":"2"/);
    assert.deepEqual(await balances(), [
      { account_id: 1, balance: 100 },
      { account_id: 2, balance: 5 },
    ], 'no balance moved');
  });
});

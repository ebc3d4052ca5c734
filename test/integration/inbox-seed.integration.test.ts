import assert from 'node:assert/strict';
import { consumerEnv, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// The seed's third scene, literally: evt_9f2 credits account 42 with 500, delivered twice.
describe('inbox: the seed example (evt_9f2 delivered twice)', () => {
  const evt = { event_id: 'evt_9f2', type: 'payment_confirmed', account_id: 42, amount: 500 };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const group = uniqueName('seed-group');
  const taskQueue = uniqueName('seed-queue');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (42, 0)');
  });
  after(async () => {
    await consumer?.stop();
    await topic?.remove();
    await db?.drop();
  });

  it('credits +500 once through the consumer worker, counting the second delivery as a duplicate', async () => {
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue }));
    await waitUntilRunning(consumer);
    const kafka = testKafka();
    await produceEvents(kafka, topic.topic, [evt]);
    await produceEvents(kafka, topic.topic, [evt]);
    await eventually('the group to commit both deliveries', () => groupCaughtUp(kafka, group, topic.topic));

    const { rows } = await db.pool.query('SELECT balance::int FROM accounts WHERE account_id = 42');
    assert.equal(rows[0].balance, 500);
    const inbox = await db.pool.query(`SELECT consumer, event_id FROM temporal_outbox.inbox_processed_events`);
    assert.deepEqual(inbox.rows, [{ consumer: 'payments-credit', event_id: 'evt_9f2' }]);
    const chunks = consumer.logs.filter((l) => l.msg === 'batch applied');
    const applied = chunks.reduce((n, l) => n + (l.applied as number), 0);
    const duplicates = chunks.reduce((n, l) => n + (l.duplicates as number), 0);
    assert.equal(applied, 1);
    assert.equal(duplicates, 1, 'the redelivery is a counted, normal outcome');
  });
});

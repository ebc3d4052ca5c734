import assert from 'node:assert/strict';
import { NativeConnection, Worker } from '@temporalio/worker';
import { loadConfig } from '../../src/config/env';
import { createSmokeActivities } from '../fixtures/smoke-activities';
import { smokeWorkflow } from '../fixtures/smoke-workflow';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { testTemporalClient } from '../kit/temporal';

describe('the real stack (smoke)', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  it('round-trips an outbox row through PostgreSQL, filling only the seed columns', async () => {
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [
      JSON.stringify({ event_id: 'evt_9f2', type: 'payment_confirmed', account_id: 42, amount: 500 }),
    ]);
    const { rows } = await db.pool.query(`SELECT event_type, payload, published_at, shard_hash FROM temporal_outbox.outbox_events`);
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0].payload, { event_id: 'evt_9f2', type: 'payment_confirmed', account_id: 42, amount: 500 });
    assert.equal(rows[0].published_at, null);
    const { rows: hash } = await db.pool.query(`SELECT hashtext('42') AS h`);
    assert.equal(rows[0].shard_hash, hash[0].h, 'the shard key falls back to the payload account_id');
  });

  it('round-trips keyed messages through Kafka with a consumer group', async () => {
    const { topic, remove } = await createTestTopic(3);
    const kafka = testKafka();
    const producer = kafka.producer();
    const consumer = kafka.consumer({ groupId: uniqueName('smoke-group'), sessionTimeout: 10_000 });
    try {
      await producer.connect();
      const sent = ['a', 'b', 'c', 'd'].map((k, i) => ({ key: k, value: `message-${i}` }));
      await producer.send({ topic, messages: sent });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const received: { key: string; value: string }[] = [];
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`only ${received.length} of ${sent.length} messages arrived in 30 s`)), 30_000);
        void consumer.run({
          eachMessage: async ({ message }) => {
            received.push({ key: message.key!.toString(), value: message.value!.toString() });
            if (received.length === sent.length) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
      assert.deepEqual(received.sort((x, y) => x.key.localeCompare(y.key)), sent);
    } finally {
      await consumer.disconnect();
      await producer.disconnect();
      await remove();
    }
  });

  it('executes a workflow on the Temporal server, whose activity reaches PostgreSQL', async () => {
    const config = loadConfig();
    const taskQueue = uniqueName('smoke');
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowsPath: require.resolve('../fixtures/smoke-workflow'),
      activities: createSmokeActivities({ db: db.pool }),
    });
    const { client, connection: clientConnection } = await testTemporalClient();
    try {
      const result = await worker.runUntil(
        client.workflow.execute(smokeWorkflow, { taskQueue, workflowId: uniqueName('smoke-wf'), args: [{ greeting: 'hello' }] }),
      );
      const { rows } = await db.pool.query('SHOW server_version');
      assert.equal(result, `hello from PostgreSQL ${rows[0].server_version}`);
    } finally {
      await clientConnection.close();
      await connection.close();
    }
  });
});

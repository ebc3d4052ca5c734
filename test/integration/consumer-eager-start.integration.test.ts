import assert from 'node:assert/strict';
import { consumerEnv, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// Each batch's applyEventsWorkflow must start on the consumer's own worker, its first workflow
// task handed back with the start (eager start), not fetched by a poll: that poll was most of a
// batch's round trip when the worker's memory flags left it no free workflow-task slot
// (workers/temporal-worker.ts, WORKFLOW_CACHE_SIZE). The consumer runs as a production process,
// with the flags of workers/node-args.ts.
describe('consumer: apply workflows start eagerly on the consumer worker', () => {
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const group = uniqueName('eager-group');
  const taskQueue = uniqueName('eager-queue');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, 10)');
  });
  after(async () => {
    await consumer?.stop();
    await topic?.remove();
    await db?.drop();
  });

  it('every flight is started eagerly, and the credits land', async () => {
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue }));
    await waitUntilRunning(consumer);
    const kafka = testKafka();
    // Several sends, so that several flights start while earlier ones are in flight or done.
    for (let round = 0; round < 5; round++) {
      await produceEvents(kafka, topic.topic, Array.from({ length: 20 }, (_, i) => ({ event_id: `eager-${round}-${i}`, type: 'payment_confirmed', account_id: 1 + (i % 10), amount: 1 })));
    }
    await eventually('the group to commit every event', () => groupCaughtUp(kafka, group, topic.topic));

    const { rows } = await db.pool.query<{ total: number }>('SELECT sum(balance)::int AS total FROM accounts');
    assert.equal(rows[0]!.total, 100);
    const flights = consumer.logs.filter((l) => l.msg === 'batch applied');
    assert.ok(flights.length >= 1, 'at least one flight');
    assert.deepEqual(
      flights.filter((f) => f.eagerlyStarted !== true).map((f) => f.workflowId),
      [],
      'flights whose first workflow task had to be polled for',
    );
  });
});

import assert from 'node:assert/strict';
import type { PoolClient } from 'pg';
import { consumerEnv, spawnConsumer, waitUntilRunning, wireMessage, type ConsumerProcess, type PaymentEvent } from '../../testkit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../../testkit/database';
import { uniqueName } from '../../testkit/ids';
import { createTestTopic, testKafka } from '../../testkit/kafka';
import { eventually } from '../../testkit/wait';

// The consumer fetches ahead of its commits (inbox/ordered-commits.ts). A credit held up in
// PostgreSQL (its account row locked by the test) must not hold up the other partitions, and
// must hold up everything behind it on its own partition: neither applied out of order nor
// committed past. Before fetching ahead, kafkajs fetched nothing new while that credit waited,
// so the other partition's event stayed unread until the lock went.
const STARTUP_MS = 240_000;

describe('consumer: fetching ahead past a credit that is held up', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  let locker: PoolClient | undefined;
  const group = uniqueName('ahead-group');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(2);
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, 2)');
  });
  after(async () => {
    await locker?.query('ROLLBACK').catch(() => undefined);
    locker?.release();
    await consumer?.stop('SIGKILL');
    await topic?.remove();
    await db?.drop();
  });

  const credited = async (eventId: string) => (await db.pool.query('SELECT 1 FROM inbox_processed_events WHERE event_id = $1', [eventId])).rowCount === 1;
  const committed = async () => {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topic.topic] });
      return Object.fromEntries(offsets!.partitions.map((p) => [p.partition, Number(p.offset)]));
    } finally {
      await admin.disconnect();
    }
  };
  const send = async (partition: number, event: PaymentEvent, outboxId: number) => {
    const producer = testKafka().producer();
    await producer.connect();
    await producer.send({ topic: topic.topic, messages: [{ ...wireMessage(event, outboxId), partition }] });
    await producer.disconnect();
  };

  it('credits the other partition meanwhile, and applies and commits the held partition in order once it is free', async () => {
    // One event per workflow, so each could fly on its own.
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('ahead-credit'), partitions: 2, extra: { CONSUMER_BATCH_SIZE: '1' } }));
    await waitUntilRunning(consumer);
    await consumer.waitForLog((l) => l.msg === 'joined consumer group', STARTUP_MS);
    await send(1, { event_id: 'warm-1', account_id: 2, amount: 1 }, 1);
    await eventually('the warm-up credit', () => credited('warm-1'), 90_000, 50);

    locker = await db.pool.connect();
    await locker.query('BEGIN');
    await locker.query('SELECT * FROM accounts WHERE account_id = 1 FOR UPDATE');
    await send(0, { event_id: 'held-a', account_id: 1, amount: 10 }, 2);
    await eventually('the first credit to wait for the lock', async () => {
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
      return rows[0].n >= 1;
    }, 60_000, 50);
    await send(0, { event_id: 'behind-b', account_id: 2, amount: 100 }, 3);
    await send(1, { event_id: 'other-c', account_id: 2, amount: 1_000 }, 4);

    await eventually('the other partition credited while the first credit waits', () => credited('other-c'), 30_000, 50);
    assert.equal(await credited('held-a'), false, 'the held credit is still waiting');
    assert.equal(await credited('behind-b'), false, 'the event behind it on its partition is not applied before it');
    await eventually('partition 1 committed past its credits', async () => (await committed())[1] === 2, 10_000, 100);
    assert.ok((await committed())[0]! <= 0, 'partition 0 is not committed past the held credit');

    await locker.query('COMMIT');
    locker.release();
    locker = undefined;
    await eventually('the held partition applied and committed, in order', async () => (await committed())[0] === 2, 60_000, 100);
    const { rows } = await db.pool.query<{ event_id: string }>(`SELECT event_id FROM inbox_processed_events WHERE event_id IN ('held-a', 'behind-b') ORDER BY processed_at, event_id`);
    assert.deepEqual(rows.map((r) => r.event_id), ['held-a', 'behind-b']);
    const balances = await db.pool.query<{ account_id: string; balance: string }>('SELECT account_id, balance FROM accounts ORDER BY account_id');
    assert.deepEqual(balances.rows.map((r) => [Number(r.account_id), Number(r.balance)]), [[1, 10], [2, 1_101]]);
  });
});

import assert from 'node:assert/strict';
import { consumerEnv, eventsWithDuplicates, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

describe('consumer: 10,000 events with 20% duplicates, then a full replay by a new group', () => {
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const accounts = 100;
  const { events, expected } = eventsWithDuplicates('replay', 8_000, 2_000, accounts);

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [accounts]);
  });
  after(async () => {
    await consumer?.stop();
    await topic?.remove();
    await db?.drop();
  });

  async function assertBalancesExact() {
    const { rows } = await db.pool.query<{ account_id: string; balance: string }>('SELECT account_id, balance FROM accounts ORDER BY account_id');
    for (const row of rows) assert.equal(Number(row.balance), expected.get(Number(row.account_id)) ?? 0, `account ${row.account_id}`);
    const inbox = await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events');
    assert.equal(inbox.rows[0].n, 8_000, 'one inbox row per unique event');
  }

  function totals(c: ConsumerProcess) {
    const chunks = c.logs.filter((l) => l.msg === 'batch applied');
    return { applied: chunks.reduce((n, l) => n + (l.applied as number), 0), duplicates: chunks.reduce((n, l) => n + (l.duplicates as number), 0) };
  }

  it('credits every unique event once and counts 2,000 duplicates', async () => {
    assert.equal(events.length, 10_000);
    const kafka = testKafka();
    await produceEvents(kafka, topic.topic, events);
    const group = uniqueName('replay-first');
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('replay-queue') }));
    await waitUntilRunning(consumer);
    await eventually('the first group to consume everything', () => groupCaughtUp(kafka, group, topic.topic));
    await assertBalancesExact();
    assert.deepEqual(totals(consumer), { applied: 8_000, duplicates: 2_000 });
    await consumer.stop();
  });

  it('a new consumer group replaying the topic from the earliest offset credits nothing again', async () => {
    const group = uniqueName('replay-second');
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('replay-queue') }));
    await waitUntilRunning(consumer);
    await eventually('the replaying group to consume everything', () => groupCaughtUp(testKafka(), group, topic.topic));
    await assertBalancesExact();
    assert.deepEqual(totals(consumer), { applied: 0, duplicates: 10_000 }, 'every replayed message is a counted duplicate');
  });
});

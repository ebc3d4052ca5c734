import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { HEADERS } from '../../src/kafka/message-format';
import { consumerEnv, groupCaughtUp, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// The public contract, from outside: any producer, in its own transaction, inserts a row with
// only event_type and payload filled; a relay worker process and a consumer worker process
// (real processes, real services) publish it and apply it, exactly once, and park bad rows
// with their reason on whichever side can tell they are bad.
describe('pipeline end to end: plain SQL producer → relay → Kafka → consumer → balance', function () {
  this.timeout(400_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: RelayProcess;
  let consumer: ConsumerProcess;
  let temporal: { client: Client; connection: Connection };
  const group = uniqueName('e2e-group');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    temporal = await testTemporalClient();
    const relayQueue = uniqueName('e2e-relay');
    relay = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: relayQueue });
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('e2e-credit') }));
    // Worker start-up (bundling workflows, joining the group) on a busy shared 2-core machine.
    await Promise.all([relay.waitUntilRunning(240_000), consumer.waitForLog((l) => l.msg === 'consumer worker running', 240_000)]);
    await startShard(temporal.client, relayQueue, { shardIndex: 0, shardCount: 1, batchSize: 500 });
  });

  after(async () => {
    await terminateStartedShards();
    await relay?.kill9();
    await consumer?.stop('SIGKILL');
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const balanceOf = async (accountId: number) =>
    Number((await db.pool.query('SELECT balance FROM accounts WHERE account_id = $1', [accountId])).rows[0].balance);

  it('credits the seed\'s event inserted by plain SQL, once, even when an operator re-publishes it', async () => {
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (42, 1000)');
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"event_id":"evt_9f2","type":"payment_confirmed","account_id":42,"amount":500}')`);
    await eventually('account 42 credited', async () => (await balanceOf(42)) === 1500, 120_000);

    const copiesOnTopic = async () => (await readWholeTopic(topic.topic)).filter((m) => m.headers[HEADERS.eventId] === 'evt_9f2').length;
    await eventually('the first delivery consumed and committed', () => groupCaughtUp(testKafka(), group, topic.topic), 60_000);
    assert.equal(await copiesOnTopic(), 1, 'one copy on the topic before the re-publish');

    // The BRIEF: setting published_at back to NULL publishes the row again; the inbox absorbs it.
    await db.pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = NULL WHERE payload->>'event_id' = 'evt_9f2'`);
    // The duplicate must reach Kafka and be consumed (the group commits past it) before the
    // balance can say anything about how it was absorbed.
    await eventually('the duplicate on the topic', async () => (await copiesOnTopic()) === 2, 120_000, 500);
    await eventually('the duplicate consumed and committed', () => groupCaughtUp(testKafka(), group, topic.topic), 120_000);
    assert.equal(await balanceOf(42), 1500, 'credited once, not twice');
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events WHERE event_id = 'evt_9f2'`);
    assert.equal(rows[0].n, 1);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_parked_events`)).rows[0].n, 0, 'absorbed silently, not parked');
  });

  it('parks bad rows with their reason on the side that can tell, and keeps crediting good ones', async () => {
    await db.pool.query('INSERT INTO accounts (account_id) VALUES (7), (8)');
    const rows: [string, string][] = [
      ['payment_confirmed', '{"type":"payment_confirmed","account_id":7,"amount":100}'], // no event id: the relay parks it
      ['payment_confirmed', '{"event_id":"e-neg","type":"payment_confirmed","account_id":7,"amount":-5}'], // the consumer parks it
      ['payment_confirmed', '{"event_id":"e-ghost","type":"payment_confirmed","account_id":999,"amount":5}'], // unknown account
      ['payment_confirmed', `{"event_id":"e-hostile'); DROP TABLE accounts; --","type":"payment_confirmed","account_id":8,"amount":3}`],
      ['payment_confirmed', '{"event_id":"e-good","type":"payment_confirmed","account_id":7,"amount":250}'],
    ];
    for (const [type, payload] of rows) await db.pool.query('INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ($1, $2)', [type, payload]);

    await eventually('good events credited', async () => (await balanceOf(7)) === 250 && (await balanceOf(8)) === 3, 120_000);
    await eventually('bad events parked on the consumer side', async () => {
      const { rows: parked } = await db.pool.query('SELECT event_id, reason FROM temporal_outbox.inbox_parked_events ORDER BY event_id');
      return parked.length === 2;
    });
    const { rows: relayParked } = await db.pool.query('SELECT last_error FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL');
    assert.equal(relayParked.length, 1);
    assert.match(relayParked[0].last_error, /event_id/);
    const { rows: consumerParked } = await db.pool.query('SELECT event_id, reason FROM temporal_outbox.inbox_parked_events ORDER BY event_id');
    assert.deepEqual(consumerParked.map((r) => r.event_id), ['e-ghost', 'e-neg']);
    assert.match(consumerParked[0].reason, /unknown account/);
    assert.match(consumerParked[1].reason, /amount/);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM accounts`)).rows[0].n, 3, 'hostile strings are data, never SQL');
  });
});

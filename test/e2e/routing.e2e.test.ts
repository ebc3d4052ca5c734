import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testKafka } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// Routing by event type on the real broker: the relay publishes each outbox row to the topic its
// type is routed to (KAFKA_TOPIC_ROUTES, else KAFKA_TOPIC); consumers subscribe to the topics of
// their handlers' types; two consumers with different names apply the same events independently,
// each exactly once, each with its own inbox rows.
describe('routing end to end: outbox → topic by event type → two independent consumers', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let relay: RelayProcess | undefined;
  const consumers: ConsumerProcess[] = [];
  let temporal: { client: Client; connection: Connection };
  const payments = uniqueName('route-pay');
  const orders = uniqueName('route-orders');
  const routes = `order_shipped=${orders}`;

  before(async () => {
    db = await createTestDatabase();
    temporal = await testTemporalClient();
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (1, 0), (2, 0)');
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.kill9();
    for (const c of consumers) await c.stop();
    await temporal?.connection.close();
    const admin = testKafka().admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [payments, orders, `${payments}.dlq`] }).catch(() => undefined);
    await admin.disconnect();
    await db?.drop();
  });

  it('publishes each type to its topic and both consumers apply every event once, each under its own name', async () => {
    // Outbox rows from a plain-SQL producer: 20 credits and 5 shipments.
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload)
      SELECT 'payment_confirmed', jsonb_build_object('event_id', 'pay-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % 2, 'amount', g)
      FROM generate_series(1, 20) g`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload)
      SELECT 'order_shipped', jsonb_build_object('event_id', 'ship-' || g, 'type', 'order_shipped', 'order_id', 'order-' || g,
                                                 'carrier', 'DHL', 'tracking_number', 'T' || g, 'shipped_at', '2026-12-03T10:00:00Z')
      FROM generate_series(1, 5) g`);

    const relayQueue = uniqueName('route-relay');
    relay = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: payments, KAFKA_TOPIC_ROUTES: routes, KAFKA_PARTITIONS: '2', RELAY_TASK_QUEUE: relayQueue });
    await relay.waitUntilRunning();
    await startShard(temporal.client, relayQueue, { shardIndex: 0, shardCount: 1, batchSize: 100 });
    await eventually('every outbox row published', async () => (await db.pool.query('SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL')).rowCount === 0, 120_000);

    const onPayments = await readWholeTopic(payments);
    const onOrders = await readWholeTopic(orders);
    assert.equal(onPayments.length, 20);
    assert.equal(onOrders.length, 5);
    assert.ok(onPayments.every((m) => m.headers['event-type'] === 'payment_confirmed'));
    assert.ok(onOrders.every((m) => m.headers['event-type'] === 'order_shipped'));

    // Two consumers of the same events, each its own name (inbox identity) and group; the second
    // applies credits only (its handlers' types route to one topic, so it subscribes to that alone).
    const env = (consumer: string, handlers: string) =>
      consumerEnv({
        databaseUrl: db.url,
        topic: payments,
        group: uniqueName(`route-${consumer}`),
        taskQueue: uniqueName(`route-${consumer}`),
        partitions: 2,
        extra: { KAFKA_TOPIC_ROUTES: routes, INBOX_CONSUMER: consumer, CONSUMER_HANDLERS: handlers },
      });
    const billingEnv = env('billing', 'payment_confirmed,order_shipped');
    const ledgerEnv = env('ledger', 'payment_confirmed');
    consumers.push(spawnConsumer(billingEnv), spawnConsumer(ledgerEnv));
    await Promise.all(consumers.map(waitUntilRunning));
    const kafka = testKafka();
    await eventually('both consumers caught up', async () =>
      (await groupCaughtUp(kafka, billingEnv.CONSUMER_GROUP, payments)) &&
      (await groupCaughtUp(kafka, billingEnv.CONSUMER_GROUP, orders)) &&
      (await groupCaughtUp(kafka, ledgerEnv.CONSUMER_GROUP, payments)),
    );

    const inbox = await db.pool.query<{ consumer: string; n: number }>(`SELECT consumer, count(*)::int AS n FROM temporal_outbox.inbox_processed_events GROUP BY consumer ORDER BY consumer`);
    assert.deepEqual(inbox.rows, [
      { consumer: 'billing', n: 25 },
      { consumer: 'ledger', n: 20 },
    ]);
    // Every credit applied once by each consumer: sum(1..20) = 210, twice. Odd g → account 2.
    const balances = await db.pool.query('SELECT account_id::int, balance::int FROM accounts ORDER BY account_id');
    assert.deepEqual(balances.rows, [
      { account_id: 1, balance: 2 * 110 },
      { account_id: 2, balance: 2 * 100 },
    ]);
    const shipments = await db.pool.query('SELECT count(*)::int AS n FROM shipments');
    assert.equal(shipments.rows[0].n, 5);

    // A replay of everything for "ledger" (a new group, same name) changes nothing.
    const replayEnv = { ...ledgerEnv, CONSUMER_GROUP: uniqueName('route-ledger-replay') };
    const replay = spawnConsumer(replayEnv);
    consumers.push(replay);
    await waitUntilRunning(replay);
    await eventually('the replay caught up', () => groupCaughtUp(kafka, replayEnv.CONSUMER_GROUP, payments));
    const after = await db.pool.query('SELECT account_id::int, balance::int FROM accounts ORDER BY account_id');
    assert.deepEqual(after.rows, balances.rows);
    const duplicates = replay.logs.filter((l) => l.msg === 'batch applied').reduce((n, l) => n + (l.duplicates as number), 0);
    assert.equal(duplicates, 20, 'the replay saw every credit again, as a duplicate');
  });
});

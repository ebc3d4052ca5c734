import assert from 'node:assert/strict';
import type { Kafka } from 'kafkajs';
import { HEADERS } from '../../src/kafka/message-format';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, wireMessage, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// Consumers are handler sets. The worker registers the example handlers named in
// CONSUMER_HANDLERS (payment_confirmed credits a balance, set-based; order_shipped inserts a
// shipment, one event at a time), subscribes to the topics their types are routed to, and treats
// a type no handler knows as "not mine": skipped and counted, or parked — never dead-lettered.
describe('consumer: handlers per event type, routed topics, unknown types', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  const payments = uniqueName('handlers-pay');
  const orders = uniqueName('handlers-orders');
  const dlq = `${payments}.dlq`;
  const routes = `order_shipped=${orders}`;
  const workers: ConsumerProcess[] = [];
  const kafka = testKafka();

  const env = (p: { group: string; consumer: string; handlers: string; extra?: Record<string, string>; database?: TestDatabase }) =>
    consumerEnv({
      databaseUrl: (p.database ?? db).url,
      topic: payments,
      group: p.group,
      taskQueue: uniqueName('handlers-queue'),
      partitions: 2,
      extra: { KAFKA_TOPIC_ROUTES: routes, INBOX_CONSUMER: p.consumer, CONSUMER_HANDLERS: p.handlers, ...p.extra },
    });
  const start = async (e: Record<string, string>) => {
    const w = spawnConsumer(e);
    workers.push(w);
    await waitUntilRunning(w);
    return w;
  };
  const shipped = (id: string, order: string, carrier: unknown = 'DHL') => ({
    key: order,
    value: JSON.stringify({ event_id: id, type: 'order_shipped', order_id: order, carrier, tracking_number: `T-${id}`, shipped_at: '2026-12-03T10:00:00Z' }),
    headers: { [HEADERS.eventId]: id, [HEADERS.eventType]: 'order_shipped' },
  });
  const other = (id: string, type: string) => ({ key: '1', value: JSON.stringify({ event_id: id, type, account_id: 1, amount: 5 }), headers: { [HEADERS.eventId]: id } });

  before(async () => {
    db = await createTestDatabase();
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (1, 0), (2, 0)');
  });
  after(async () => {
    for (const w of workers) await w.stop();
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [payments, orders, dlq] }).catch(() => undefined);
    await admin.disconnect();
    await db?.drop();
  });

  it('one worker applies both handlers from their own topics; unknown types are skipped and counted, not parked or dead-lettered', async () => {
    const group = uniqueName('handlers-both');
    // Its metrics endpoint on a port of its own (below the ephemeral range, away from the stack's 19400).
    const metricsBase = 22_000 + Math.floor(Math.random() * 500) * 20;
    const both = await start(env({ group, consumer: 'both', handlers: 'payment_confirmed,order_shipped', extra: { METRICS_PORT_BASE: String(metricsBase) } }));
    const running = both.logs.find((l) => l.msg === 'consumer worker running')!;
    assert.deepEqual(running.topics, [orders, payments].sort(), 'subscribed to the topics its types are routed to');
    const applied = (eventType: string) => metricValue(metricsBase + 1, `inbox_events_applied_total{handler="both",event_type="${eventType}"`);
    assert.equal(await applied('order_shipped'), 0);
    assert.equal(await applied('payment_confirmed'), 0);
    const parkedAt = (stage: string) => metricValue(metricsBase + 1, `inbox_parked_total{handler="both",stage="${stage}"`);
    assert.equal(await parkedAt('rejected'), 0);

    const hostileType = "x'; DROP TABLE accounts; --";
    await send(kafka, payments, [
      wireMessage({ event_id: 'pay-1', account_id: 1, amount: 100 }, 1),
      other('refund-1', 'payment_refunded'),
      wireMessage({ event_id: 'pay-2', account_id: 2, amount: 7 }, 2),
      other('refund-2', 'payment_refunded'),
      other('hostile-1', hostileType),
      wireMessage({ event_id: 'pay-3', account_id: 999, amount: 3 }, 3),
    ]);
    await send(kafka, orders, [
      shipped('ship-1', 'order-1'),
      shipped('ship-1', 'order-1'), // a redelivery: applied once
      shipped('ship-2', 'order-1'), // a second shipment of one order breaks the table's rule: parked
      shipped('ship-3', 'order-2', ''), // invalid payload: parked and dead-lettered
      shipped('ship-4', 'order-3'),
    ]);
    await eventually('both topics consumed', async () => (await groupCaughtUp(kafka, group, payments)) && (await groupCaughtUp(kafka, group, orders)));

    const balances = await db.pool.query('SELECT account_id::int, balance::int FROM accounts ORDER BY account_id');
    assert.deepEqual(balances.rows, [
      { account_id: 1, balance: 100 },
      { account_id: 2, balance: 7 },
    ]);
    const shipments = await db.pool.query('SELECT order_id, event_id, carrier FROM shipments ORDER BY order_id');
    assert.deepEqual(shipments.rows, [
      { order_id: 'order-1', event_id: 'ship-1', carrier: 'DHL' },
      { order_id: 'order-3', event_id: 'ship-4', carrier: 'DHL' },
    ]);
    const inbox = await db.pool.query(`SELECT event_id FROM temporal_outbox.inbox_processed_events WHERE consumer = 'both' ORDER BY event_id`);
    assert.deepEqual(inbox.rows.map((r) => r.event_id), ['pay-1', 'pay-2', 'ship-1', 'ship-4'], 'rejected events leave no inbox row (a re-drive can still apply them)');

    const parked = await db.pool.query(`SELECT event_id, reason FROM temporal_outbox.inbox_parked_events WHERE consumer = 'both' ORDER BY event_id`);
    assert.equal(parked.rowCount, 3);
    assert.deepEqual(parked.rows[0], { event_id: 'pay-3', reason: 'unknown account' });
    assert.equal(parked.rows[1].event_id, 'ship-2');
    assert.match(parked.rows[1].reason, /^order_shipped handler failed: duplicate key value violates unique constraint "shipments_pkey"$/);
    assert.deepEqual(parked.rows[2], { event_id: 'ship-3', reason: 'order_shipped v1: carrier: must be a non-empty string of at most 200 characters (got "")' });

    const skipped = await db.pool.query(`SELECT event_type, skipped::int FROM temporal_outbox.inbox_skipped_event_types WHERE consumer = 'both' ORDER BY event_type`);
    assert.deepEqual(skipped.rows, [
      { event_type: 'payment_refunded', skipped: 2 },
      { event_type: hostileType, skipped: 1 },
    ].sort((a, b) => (a.event_type < b.event_type ? -1 : 1)));

    // Only the malformed shipment reaches the dead-letter topic; unknown types never do.
    const dead = await readTopic(kafka, dlq, 1);
    assert.deepEqual(dead.map((d) => d.eventId), ['ship-3']);

    // Applied events counted under their own type: pay-1, pay-2 credited; ship-1, ship-4 shipped.
    assert.equal(await applied('payment_confirmed'), 2);
    assert.equal(await applied('order_shipped'), 2);
    // Parked by stage: the unknown account and the taken shipment key are both handler refusals;
    // the empty carrier failed validation before any handler ran.
    assert.equal(await parkedAt('rejected'), 2);
    assert.equal(await parkedAt('validation'), 1);
    assert.equal(await parkedAt('unknown_account'), 0);
  });

  it('the same handlers in separate workers (one per event type) each consume only their own topic', async () => {
    // A service of its own (own database), as a team splitting the two handlers would run them.
    const db2 = await createTestDatabase();
    try {
      await db2.pool.query('INSERT INTO accounts (account_id, balance) VALUES (1, 0), (2, 0)');
      const payGroup = uniqueName('handlers-pay-only');
      const shipGroup = uniqueName('handlers-ship-only');
      const [payOnly, shipOnly] = await Promise.all([
        start(env({ group: payGroup, consumer: 'payments-only', handlers: 'payment_confirmed', database: db2 })),
        start(env({ group: shipGroup, consumer: 'shipping-only', handlers: 'order_shipped', database: db2 })),
      ]);
      assert.deepEqual(payOnly.logs.find((l) => l.msg === 'consumer worker running')!.topics, [payments]);
      assert.deepEqual(shipOnly.logs.find((l) => l.msg === 'consumer worker running')!.topics, [orders]);
      await send(kafka, payments, [wireMessage({ event_id: 'pay-10', account_id: 1, amount: 1000 }, 10)]);
      await send(kafka, orders, [shipped('ship-10', 'order-10')]);
      await eventually('each separate worker caught up on its topic', async () => (await groupCaughtUp(kafka, payGroup, payments)) && (await groupCaughtUp(kafka, shipGroup, orders)));

      // Everything on the topics so far, each type by its own worker, with the same outcomes as one worker.
      const balances = await db2.pool.query('SELECT account_id::int, balance::int FROM accounts ORDER BY account_id');
      assert.deepEqual(balances.rows, [
        { account_id: 1, balance: 1100 },
        { account_id: 2, balance: 7 },
      ]);
      const shipments = await db2.pool.query('SELECT order_id, event_id FROM shipments ORDER BY order_id');
      assert.deepEqual(shipments.rows, [
        { order_id: 'order-1', event_id: 'ship-1' },
        { order_id: 'order-10', event_id: 'ship-10' },
        { order_id: 'order-3', event_id: 'ship-4' },
      ]);
      const inbox = await db2.pool.query(`SELECT consumer, event_id FROM temporal_outbox.inbox_processed_events ORDER BY consumer, event_id`);
      assert.deepEqual(inbox.rows.map((r) => `${r.consumer}:${r.event_id}`), [
        'payments-only:pay-1', 'payments-only:pay-10', 'payments-only:pay-2',
        'shipping-only:ship-1', 'shipping-only:ship-10', 'shipping-only:ship-4',
      ]);
      // The payments-only consumer never sees order_shipped (another topic) and skipped only the unknown types on its own.
      const skipped = await db2.pool.query(`SELECT consumer, event_type FROM temporal_outbox.inbox_skipped_event_types WHERE event_type = 'payment_refunded'`);
      assert.deepEqual(skipped.rows, [{ consumer: 'payments-only', event_type: 'payment_refunded' }]);
    } finally {
      for (const w of workers.splice(1)) await w.stop();
      await db2.drop();
    }
  });

  it('with CONSUMER_UNKNOWN_EVENT_TYPES=park, unknown types are parked with their reason (still not dead-lettered)', async () => {
    const group = uniqueName('handlers-park');
    await start(env({ group, consumer: 'parker', handlers: 'payment_confirmed', extra: { CONSUMER_UNKNOWN_EVENT_TYPES: 'park' } }));
    await eventually('the parking consumer caught up', () => groupCaughtUp(kafka, group, payments));
    const parked = await db.pool.query(`SELECT event_id, reason FROM temporal_outbox.inbox_parked_events WHERE consumer = 'parker' AND event_id LIKE 'refund-%' ORDER BY event_id`);
    assert.deepEqual(parked.rows, [
      { event_id: 'refund-1', reason: 'no handler for event type "payment_refunded" in consumer "parker"' },
      { event_id: 'refund-2', reason: 'no handler for event type "payment_refunded" in consumer "parker"' },
    ]);
    const skipped = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_skipped_event_types WHERE consumer = 'parker'`);
    assert.equal(skipped.rows[0].n, 0);
    const dead = await readTopic(kafka, dlq, 1);
    assert.equal(dead.filter((d) => d.eventId.startsWith('refund-')).length, 0, 'unknown types are never dead-lettered');
  });
});

/** A counter's value from a worker's /metrics (summed over the series whose text starts with `series`); 0 when absent. */
async function metricValue(port: number, series: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(series))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

async function send(kafka: Kafka, topic: string, messages: { key: string; value: string; headers: Record<string, string> }[]) {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic, messages });
  await producer.disconnect();
}

/** Everything on a topic (waits for at least `atLeast` messages, then a little longer for strays). */
async function readTopic(kafka: Kafka, topic: string, atLeast: number): Promise<{ eventId: string; reason: string }[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('handlers-reader'), sessionTimeout: 10_000 });
  const seen: { eventId: string; reason: string }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) =>
      void seen.push({ eventId: (JSON.parse(message.value!.toString()) as { event_id: string }).event_id, reason: message.headers?.['dlq-reason']?.toString() ?? '' }),
  });
  await eventually(`${atLeast} message(s) on ${topic}`, async () => seen.length >= atLeast, 30_000);
  await new Promise((r) => setTimeout(r, 2000));
  await consumer.disconnect();
  return seen;
}

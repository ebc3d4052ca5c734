import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { defineEventCatalog, enqueue, EVENT_VERSION_HEADER, inTransaction, loadConfig } from 'temporal-outbox';
import { runConsumerWorker } from '../../workers/consumer.worker';
import { consumerEnv } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { OrderPlacedV1, OrderPlacedV2 } from '../fixtures/events/order-placed';
import { CREATE_PLACED_ORDERS, placedOrderHandler, placedOrders } from '../fixtures/events/placed-orders';

// Two versions of one type on one topic at once: a producer still on v1 and one already on v2
// enqueue side by side (and a plain-SQL producer writes v1 rows without the version header), the
// relay publishes them all, and the v2 handler applies every event once: v1 ones through the
// upcast registered with v2 (total → total_minor, customer → first_name + last_name).
describe('event versions: v1 and v2 producers side by side, one v2 handler', function () {
  this.timeout(300_000);
  const PER_PRODUCER = 40;
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: InProcessRelay;
  const stop = new AbortController();
  let consumer: Promise<unknown>;

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    await db.pool.query(CREATE_PLACED_ORDERS);
    topic = await createTestTopic(2);
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic), { events: defineEventCatalog([OrderPlacedV2]) });
    const env = consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('versions-group'), taskQueue: uniqueName('versions-consumer'), partitions: 2, extra: { INBOX_CONSUMER: 'orders-v2', METRICS_PORT_BASE: '0', LOG_LEVEL: 'warn' } });
    consumer = runConsumerWorker(loadConfig({ ...process.env, ...env }), { handlers: [placedOrderHandler], signal: stop.signal });
    consumer.catch(() => undefined);
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.close();
    stop.abort();
    await consumer?.catch(() => undefined);
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  it('the topic holds both versions; the v2 handler applies each event once, v1 ones upcast', async () => {
    await startShard(temporal.client, relay.taskQueue, { batchSize: 20 });
    const v1Producer = async () => {
      for (let i = 0; i < PER_PRODUCER; i++) {
        await inTransaction(db.pool, (tx) => enqueue(tx, OrderPlacedV1, { event_id: `v1-${i}`, order_id: `a-${i}`, customer: `Ada Lovelace ${i}`, total: 100 + i }));
      }
    };
    const v2Producer = async () => {
      for (let i = 0; i < PER_PRODUCER; i++) {
        await inTransaction(db.pool, (tx) => enqueue(tx, OrderPlacedV2, { event_id: `v2-${i}`, order_id: `b-${i}`, first_name: 'Alan', last_name: `Turing ${i}`, total_minor: 200 + i }));
      }
    };
    const sqlProducer = async () => {
      for (let i = 0; i < 5; i++) {
        await db.pool.query('INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ($1, $2)', [
          'order_placed',
          JSON.stringify({ event_id: `sql-${i}`, type: 'order_placed', order_id: `c-${i}`, customer: 'Grace Hopper', total: 300 + i }),
        ]);
      }
    };
    // Side by side, while the relay and the consumer run.
    await Promise.all([v1Producer(), v2Producer(), sqlProducer()]);
    const total = 2 * PER_PRODUCER + 5;
    await eventually(`${total} orders applied`, async () => (await placedOrders(db.pool)).length === total, 180_000);

    const messages = await readWholeTopic(topic.topic);
    const versions = new Map<string, number>();
    for (const m of messages) versions.set(m.headers[EVENT_VERSION_HEADER] ?? 'none', (versions.get(m.headers[EVENT_VERSION_HEADER] ?? 'none') ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(versions), { '1': PER_PRODUCER, '2': PER_PRODUCER, none: 5 }, 'both versions (and header-less v1 rows) on the topic at once');

    const orders = new Map((await placedOrders(db.pool)).map((r) => [r.order_id as string, r]));
    assert.equal(orders.size, total);
    assert.deepEqual(orders.get('a-7'), { order_id: 'a-7', first_name: 'Ada', last_name: 'Lovelace 7', total_minor: 107, event_id: 'v1-7' });
    assert.deepEqual(orders.get('b-7'), { order_id: 'b-7', first_name: 'Alan', last_name: 'Turing 7', total_minor: 207, event_id: 'v2-7' });
    assert.deepEqual(orders.get('c-3'), { order_id: 'c-3', first_name: 'Grace', last_name: 'Hopper', total_minor: 303, event_id: 'sql-3' });
    const processed = await db.pool.query(`SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS distinct_ids FROM temporal_outbox.inbox_processed_events WHERE consumer = 'orders-v2'`);
    assert.deepEqual(processed.rows[0], { n: total, distinct_ids: total }, 'each event applied once');
    assert.equal((await db.pool.query('SELECT 1 FROM temporal_outbox.inbox_parked_events')).rowCount, 0, 'nothing parked');
    assert.equal((await db.pool.query('SELECT 1 FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL')).rowCount, 0, 'nothing parked by the relay');
  });
});

import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { defineEventCatalog, loadConfig } from 'temporal-outbox';
import { runConsumerWorker } from '../../workers/consumer.worker';
import { consumerEnv } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { OrderPlacedV2 } from '../fixtures/events/order-placed';
import { CREATE_PLACED_ORDERS, placedOrderHandler, placedOrders } from '../fixtures/events/placed-orders';
import { insertVersionedRow } from '../kit/versioned-rows';

// Rows a plain-SQL producer writes that do not match their type's schema: parked with the
// schema's message by the consumer (a relay that does not know the types publishes them), or by
// the relay itself when it is given the catalog; the good rows around them are applied, v1 rows
// upcast for the v2 handler. The real relay, consumer, Kafka, PostgreSQL and Temporal.
describe('event schemas: bad plain-SQL rows parked with the schema message, good rows applied', function () {
  this.timeout(300_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: InProcessRelay | undefined;
  const stop = new AbortController();
  let consumer: Promise<unknown>;

  const insert = (payload: Record<string, unknown>, version?: number) => insertVersionedRow(db.pool, 'order_placed', payload, version);
  const outboxParked = async () => (await db.pool.query(`SELECT payload->>'event_id' AS event_id, last_error FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL ORDER BY id`)).rows;
  const inboxParked = async () => (await db.pool.query('SELECT event_id, reason FROM temporal_outbox.inbox_parked_events ORDER BY kafka_offset')).rows;

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    await db.pool.query(CREATE_PLACED_ORDERS);
    topic = await createTestTopic(1);
    const env = consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('schemas-group'), taskQueue: uniqueName('schemas-consumer'), partitions: 1, extra: { INBOX_CONSUMER: 'orders', METRICS_PORT_BASE: '0', LOG_LEVEL: 'warn' } });
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

  it('a relay without the catalog publishes them; the consumer parks them with the schema message and applies v1 and v2 rows', async () => {
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    await insert({ event_id: 'c-good-v1', type: 'order_placed', order_id: 'o-1', customer: 'Ada Lovelace', total: 1250 });
    await insert({ event_id: 'c-bad-v1', type: 'order_placed', order_id: 'o-2', customer: 'Bob', total: '12' });
    await insert({ event_id: 'c-good-v2', type: 'order_placed', order_id: 'o-3', first_name: 'Alan', last_name: 'Turing', total_minor: 99 }, 2);
    await insert({ event_id: 'c-bad-v2', type: 'order_placed', order_id: 'o-4', first_name: 'Grace', total_minor: 5 }, 2);
    await startShard(temporal.client, relay.taskQueue, { batchSize: 10 });
    await eventually('two applied, two parked', async () => (await placedOrders(db.pool)).length === 2 && (await inboxParked()).length === 2, 120_000);

    assert.deepEqual(await placedOrders(db.pool), [
      { order_id: 'o-1', first_name: 'Ada', last_name: 'Lovelace', total_minor: 1250, event_id: 'c-good-v1' },
      { order_id: 'o-3', first_name: 'Alan', last_name: 'Turing', total_minor: 99, event_id: 'c-good-v2' },
    ]);
    assert.deepEqual(await inboxParked(), [
      { event_id: 'c-bad-v1', reason: 'order_placed v1: total: Invalid input: expected number, received string' },
      { event_id: 'c-bad-v2', reason: 'order_placed v2: last_name: Invalid input: expected string, received undefined' },
    ]);
    assert.deepEqual(await outboxParked(), [], 'the relay did not know the types: it parked nothing');
  });

  it('a relay given the catalog parks them itself with the schema message; the good rows flow', async () => {
    await terminateStartedShards();
    await relay!.close();
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic), { events: defineEventCatalog([OrderPlacedV2]) });
    await insert({ event_id: 'r-good-v1', type: 'order_placed', order_id: 'o-5', customer: 'Edsger Dijkstra', total: 7 });
    await insert({ event_id: 'r-bad-v1', type: 'order_placed', order_id: 'o-6', customer: 'Eve', total: -5 });
    await insert({ event_id: 'r-bad-version', type: 'order_placed', order_id: 'o-7', customer: 'Eve', total: 5 }, 2);
    await insert({ event_id: 'r-good-v2', type: 'order_placed', order_id: 'o-8', first_name: 'Barbara', last_name: 'Liskov', total_minor: 3 }, 2);
    await startShard(temporal.client, relay.taskQueue, { batchSize: 10 });
    await eventually('four applied in all', async () => (await placedOrders(db.pool)).length === 4, 120_000);
    await eventually('nothing pending', async () => (await db.pool.query('SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL')).rowCount === 0);

    assert.deepEqual(await outboxParked(), [
      { event_id: 'r-bad-v1', last_error: 'order_placed v1: total: Too small: expected number to be >0' },
      {
        event_id: 'r-bad-version',
        last_error: 'order_placed v2: first_name: Invalid input: expected string, received undefined; last_name: Invalid input: expected string, received undefined; total_minor: Invalid input: expected number, received undefined',
      },
    ]);
    assert.deepEqual((await placedOrders(db.pool)).map((r) => r.event_id), ['c-good-v1', 'c-good-v2', 'r-good-v1', 'r-good-v2']);
    assert.equal((await inboxParked()).length, 2, 'the consumer parked nothing more');
  });
});

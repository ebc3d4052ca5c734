import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { SchemaRegistryClient } from '../../src/formats/registry/client';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testKafka } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testSchemaRegistry } from '../kit/schema-registry';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { CREDIT_AVRO } from '../fixtures/events/credit-avro';

// Schema Registry end to end on the real stack (PostgreSQL, Kafka, Temporal, Apicurio Registry):
// the relay writes a registry topic in the Confluent wire format with the subject's Avro schema;
// a consumer with the registry applies every event once, exactly as from plain JSON; a consumer
// without it parks each message saying what it is; a row whose payload does not fit the schema is
// parked by the relay with the encoder's reason while the good rows flow past it.

describe('Schema Registry end to end: relay → Avro in the wire format → consumers with and without the registry', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let registry: { url: string; stop: () => Promise<void> };
  let relay: RelayProcess | undefined;
  const consumers: ConsumerProcess[] = [];
  let temporal: { client: Client; connection: Connection };
  const topic = uniqueName('sr-pay');

  before(async function () {
    // The first run builds the registry from Maven Central.
    this.timeout(20 * 60_000);
    registry = await testSchemaRegistry();
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
    await admin.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
    await admin.disconnect();
    await db?.drop();
    await registry?.stop();
  });

  it('encodes with the registered schema, decodes for the registry consumer, parks for the other and for a payload that does not fit', async () => {
    // A deployment step registers the type's schema under the topic's subject (TopicNameStrategy).
    const schemaId = await new SchemaRegistryClient({ url: registry.url, requestTimeoutMs: 10_000 }).register(`${topic}-value`, JSON.stringify(CREDIT_AVRO), 'AVRO');

    // 20 good credits and, in the middle, one whose amount is no Avro long.
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload)
      SELECT 'payment_confirmed', jsonb_build_object('event_id', 'sr-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % 2, 'amount', g)
      FROM generate_series(1, 10) g`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload)
      VALUES ('payment_confirmed', '{"event_id":"sr-bad","type":"payment_confirmed","account_id":1,"amount":"lots"}')`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload)
      SELECT 'payment_confirmed', jsonb_build_object('event_id', 'sr-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % 2, 'amount', g)
      FROM generate_series(11, 20) g`);

    const registryEnv = { SCHEMA_REGISTRY_URL: registry.url, SCHEMA_REGISTRY_TOPICS: `${topic}=avro` };
    const relayQueue = uniqueName('sr-relay');
    relay = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, KAFKA_PARTITIONS: '2', RELAY_TASK_QUEUE: relayQueue, ...registryEnv });
    await relay.waitUntilRunning();
    await startShard(temporal.client, relayQueue, { shardIndex: 0, shardCount: 1, batchSize: 100 });
    await eventually(
      'every good row published, the bad one parked',
      async () => (await db.pool.query('SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL')).rowCount === 0,
      120_000,
    );
    const parked = await db.pool.query<{ event_id: string; last_error: string }>(
      `SELECT payload->>'event_id' AS event_id, last_error FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL`,
    );
    assert.deepEqual(parked.rows, [
      { event_id: 'sr-bad', last_error: `payload does not fit the Avro schema payments.PaymentConfirmed: amount (got "lots") (subject ${topic}-value, schema id ${schemaId})` },
    ]);

    // On the topic: 20 values in the wire format, magic byte 0 then the schema's id, big-endian.
    const messages = await readWholeTopic(topic);
    assert.equal(messages.length, 20);
    for (const m of messages) {
      assert.equal(m.valueBytes![0], 0, 'magic byte');
      assert.equal(m.valueBytes!.readUInt32BE(1), schemaId, 'schema id');
      assert.equal(m.headers['event-type'], 'payment_confirmed');
    }

    const env = (consumer: string, extra: Record<string, string>) =>
      consumerEnv({ databaseUrl: db.url, topic, group: uniqueName(`sr-${consumer}`), taskQueue: uniqueName(`sr-${consumer}`), partitions: 2, extra: { INBOX_CONSUMER: consumer, ...extra } });
    const withRegistry = env('sr-decoding', registryEnv);
    const without = env('sr-plain', {});
    consumers.push(spawnConsumer(withRegistry), spawnConsumer(without));
    await Promise.all(consumers.map(waitUntilRunning));
    const kafka = testKafka();
    await eventually('both consumers caught up', async () => (await groupCaughtUp(kafka, withRegistry.CONSUMER_GROUP, topic)) && (await groupCaughtUp(kafka, without.CONSUMER_GROUP, topic)));

    // The registry consumer applied each credit once: sum(1..20) = 210, odd g → account 2.
    const applied = await db.pool.query<{ consumer: string; n: number }>(`SELECT consumer, count(*)::int AS n FROM temporal_outbox.inbox_processed_events GROUP BY consumer`);
    assert.deepEqual(applied.rows, [{ consumer: 'sr-decoding', n: 20 }]);
    const balances = await db.pool.query('SELECT account_id::int, balance::int FROM accounts ORDER BY account_id');
    assert.deepEqual(balances.rows, [
      { account_id: 1, balance: 110 },
      { account_id: 2, balance: 100 },
    ]);

    // The consumer without the registry parked all 20 with a reason that says what to do, never garbage.
    const reasons = await db.pool.query<{ consumer: string; reason: string; n: number }>(
      `SELECT consumer, reason, count(*)::int AS n FROM temporal_outbox.inbox_parked_events GROUP BY consumer, reason`,
    );
    assert.deepEqual(reasons.rows, [
      { consumer: 'sr-plain', reason: `value is Confluent Schema Registry wire format (schema id ${schemaId}), not JSON; configure SCHEMA_REGISTRY_URL (kafka.schemaRegistry.url) for topic ${topic}`, n: 20 },
    ]);
  });
});

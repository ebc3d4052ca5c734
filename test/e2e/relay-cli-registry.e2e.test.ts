import assert from 'node:assert/strict';
import path from 'node:path';
import avro from 'avsc';
import type { Client, Connection } from '@temporalio/client';
import { PROJECT_ROOT } from '../../src/config/env';
import { SchemaRegistryClient } from '../../src/formats/registry/client';
import { HEADERS } from '../../src/kafka/message-format';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testSchemaRegistry } from '../kit/schema-registry';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { insertVersionedRow } from '../kit/versioned-rows';

const CLI = path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts');
const EVENTS_MODULE = path.join('test', 'fixtures', 'events', 'registry-module.ts');

// The package's bin CLI relay worker with the service's events module and a Schema Registry: a
// `json-schema` topic carries, for each row, the id of the JSON Schema of the version the row was
// written as, and an `avro` topic the id of the Avro record that version declares, both registered
// by the relay from the module's event types, not the schemas the subjects held last (another
// deployment's). One real worker process for both topics, PostgreSQL, Kafka, Temporal and Apicurio
// Registry.
describe('`temporal-outbox relay worker --events <module>` with a Schema Registry: the module\'s schemas, per version', function () {
  this.timeout(400_000);
  let registry: { url: string; stop: () => Promise<void> };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let avroTopic: { topic: string; remove(): Promise<void> };
  let relay: RelayProcess | undefined;
  let temporal: { client: Client; connection: Connection };

  before(async function () {
    // The first run on a machine builds the registry from Maven Central.
    this.timeout(20 * 60_000);
    registry = await testSchemaRegistry();
    db = await createTestDatabase();
    topic = await createTestTopic(1);
    avroTopic = await createTestTopic(1);
    temporal = await testTemporalClient();
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.kill9();
    await temporal?.connection.close();
    await topic?.remove();
    await avroTopic?.remove();
    await db?.drop();
    await registry?.stop();
  });

  const insert = (payload: Record<string, unknown>, version?: number, type = 'order_placed') =>
    insertVersionedRow(db.pool, type, { type, ...payload }, version);

  it('frames v1 and v2 rows with the ids of the module\'s v1 and v2 schemas, JSON Schema and Avro, not the subjects\' latest', async () => {
    const client = new SchemaRegistryClient({ url: registry.url, requestTimeoutMs: 10_000 });
    const subject = `${topic.topic}-value`;
    // What the subject held last before this relay started: another deployment's schema.
    const othersId = await client.register(subject, JSON.stringify({ type: 'object', title: 'order_placed by another deployment', properties: { event_id: { type: 'string' }, note: { type: 'string' } } }), 'JSON');
    const avroSubject = `${avroTopic.topic}-value`;
    const othersAvroId = await client.register(avroSubject, JSON.stringify({ type: 'record', name: 'Other', fields: [{ name: 'event_id', type: 'string' }, { name: 'type', type: 'string' }] }), 'AVRO');

    const relayQueue = uniqueName('cli-registry-relay');
    relay = new RelayProcess(
      {
        DATABASE_URL: db.url,
        KAFKA_TOPIC: topic.topic,
        KAFKA_TOPIC_ROUTES: `order_packed=${avroTopic.topic}`,
        RELAY_TASK_QUEUE: relayQueue,
        SCHEMA_REGISTRY_URL: registry.url,
        SCHEMA_REGISTRY_TOPICS: `${topic.topic}=json-schema,${avroTopic.topic}=avro`,
      },
      ['--import', 'tsx'],
      [CLI, 'relay', 'worker', '--events', EVENTS_MODULE],
    );
    await relay.waitUntilRunning(240_000);
    const v1 = { event_id: 'cr-v1', order_id: 'o-1', customer: 'Ada Lovelace', total: 1250 };
    const v2 = { event_id: 'cr-v2', order_id: 'o-2', first_name: 'Alan', last_name: 'Turing', total_minor: 99 };
    const v1After = { event_id: 'cr-v1-after', order_id: 'o-3', customer: 'Edsger Dijkstra', total: 7 };
    await insert(v1);
    await insert(v2, 2);
    await insert(v1After);
    const packedV1 = { event_id: 'cr-packed-v1', order_id: 'o-1', boxes: 2 };
    const packedV2 = { event_id: 'cr-packed-v2', order_id: 'o-2', boxes: 1, weight_grams: 1200 };
    await insert(packedV1, undefined, 'order_packed');
    await insert(packedV2, 2, 'order_packed');
    await startShard(temporal.client, relayQueue, { batchSize: 10 });
    await eventually('nothing pending', async () => (await db.pool.query('SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL')).rowCount === 0, 120_000);
    const parked = await db.pool.query(`SELECT payload->>'event_id' AS event_id, last_error FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL`);
    assert.deepEqual(parked.rows, [], 'every row fits its version\'s schema');

    // Each message: magic byte 0, a schema id, the payload's JSON text.
    const messages = (await readWholeTopic(topic.topic)).map((m) => {
      const value = m.valueBytes!;
      assert.equal(value[0], 0, 'the Confluent magic byte');
      return { eventId: m.headers[HEADERS.eventId], schemaId: value.readUInt32BE(1), payload: JSON.parse(value.subarray(5).toString('utf8')) as Record<string, unknown> };
    });
    assert.deepEqual(messages.map((m) => [m.eventId, m.payload]), [v1, v2, v1After].map((p) => [p.event_id, { type: 'order_placed', ...p }]));
    const [idV1, idV2, idV1After] = messages.map((m) => m.schemaId);
    assert.equal(idV1After, idV1, 'one schema id per version');
    assert.notEqual(idV1, idV2, 'v1 and v2 rows carry different schemas');
    assert.notEqual(idV1, othersId, 'not the schema the subject held last');
    assert.notEqual(idV2, othersId, 'not the schema the subject held last');

    // The registry serves those ids under the topic's subject, and they are the module's versions.
    const underSubject = await idsUnder(registry.url, subject);
    assert.ok(underSubject.includes(idV1!) && underSubject.includes(idV2!), `ids ${idV1} and ${idV2} are versions of ${subject} (it holds ${underSubject.join(', ')})`);
    const served = async (id: number) => JSON.parse((await client.byId(id)).schema) as { properties: Record<string, unknown>; required: string[] };
    const [schemaV1, schemaV2] = [await served(idV1!), await served(idV2!)];
    assert.deepEqual(Object.keys(schemaV1.properties).sort(), ['customer', 'event_id', 'order_id', 'total', 'type']);
    assert.deepEqual(schemaV1.required.sort(), ['customer', 'event_id', 'order_id', 'total']);
    assert.deepEqual(Object.keys(schemaV2.properties).sort(), ['currency', 'event_id', 'first_name', 'last_name', 'order_id', 'total_minor', 'type']);
    assert.deepEqual(schemaV2.required.sort(), ['event_id', 'first_name', 'last_name', 'order_id', 'total_minor']);

    // The Avro topic: each version's own record, which the registry serves under its subject, and
    // whose body decodes to the row's payload.
    const avroMessages = await Promise.all(
      (await readWholeTopic(avroTopic.topic)).map(async (m) => {
        const value = m.valueBytes!;
        assert.equal(value[0], 0, 'the Confluent magic byte');
        const schemaId = value.readUInt32BE(1);
        const record = JSON.parse((await client.byId(schemaId)).schema) as avro.Schema & { name: string; fields: { name: string }[] };
        return { schemaId, fields: record.fields.map((f) => f.name), payload: avro.Type.forSchema(record).fromBuffer(value.subarray(5)) as object };
      }),
    );
    assert.deepEqual(avroMessages.map((m) => ({ ...m.payload })), [packedV1, packedV2].map((p) => ({ type: 'order_packed', ...p })));
    const [packedIdV1, packedIdV2] = avroMessages.map((m) => m.schemaId);
    assert.deepEqual(avroMessages.map((m) => m.fields), [['event_id', 'type', 'order_id', 'boxes'], ['event_id', 'type', 'order_id', 'boxes', 'weight_grams']]);
    assert.ok(packedIdV1 !== othersAvroId && packedIdV2 !== othersAvroId, 'not the Avro schema the subject held last');
    const underAvroSubject = await idsUnder(registry.url, avroSubject);
    assert.ok(underAvroSubject.includes(packedIdV1!) && underAvroSubject.includes(packedIdV2!), `ids ${packedIdV1} and ${packedIdV2} are versions of ${avroSubject}`);
  });
});

/** The global ids of every version registered under the subject (Confluent API: versions, then each version). */
async function idsUnder(url: string, subject: string): Promise<number[]> {
  const get = async <T>(p: string) => {
    const response = await fetch(`${url}/subjects/${encodeURIComponent(subject)}/versions${p}`, { signal: AbortSignal.timeout(10_000) });
    assert.ok(response.ok, `GET versions${p} of ${subject}: ${response.status}`);
    return (await response.json()) as T;
  };
  const versions = await get<number[]>('');
  return Promise.all(versions.map(async (v) => (await get<{ id: number }>(`/${v}`)).id));
}

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Parser } from '@asyncapi/parser';
import { AvroSchemaParser } from '@asyncapi/avro-schema-parser';
import { buildAsyncApiDocument, loadConfig } from 'temporal-outbox';
import { PROJECT_ROOT } from '../../src/config/env';
import { asyncApi as paymentsExample } from '../../examples/payments/asyncapi';
import { EXAMPLE_SETTINGS } from '../../examples/example-settings';
import { OrderPackedV2 } from '../fixtures/events/order-packed';
import { OrderPlacedV2 } from '../fixtures/events/order-placed';
import { placedOrderHandler } from '../fixtures/events/placed-orders';
import { nodeScript } from '../kit/compiled-build';

// The AsyncAPI 3.0 document: valid by @asyncapi/parser, and the committed one of the example
// (examples/payments/asyncapi.json) the same as the code produces now. Regenerate it with:
//   KAFKA_TOPIC=payments.events KAFKA_TOPIC_ROUTES=order_shipped=orders.events npx tsx src/cli/main.ts asyncapi --module examples/payments/asyncapi.ts --out examples/payments/asyncapi.json
const COMMITTED = path.join(PROJECT_ROOT, 'examples', 'payments', 'asyncapi.json');
// The example's topic is its own (examples/example-settings.ts), not the library's default.
const EXAMPLE_ENV = { KAFKA_TOPIC: EXAMPLE_SETTINGS.KAFKA_TOPIC, KAFKA_TOPIC_ROUTES: 'order_shipped=orders.events' };

// A reader of Avro payloads registers the Avro schema parser, as AsyncAPI's tools do.
const parser = () => {
  const p = new Parser();
  p.registerSchemaParser(AvroSchemaParser());
  return p;
};

async function problems(document: unknown): Promise<string[]> {
  const { diagnostics } = await parser().parse(JSON.stringify(document));
  // Severity 0 = error, 1 = warning; 2 and 3 are hints (such as "3.1.0 exists").
  return diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`);
}

describe('the AsyncAPI document', function () {
  this.timeout(60_000);

  it("the example's document is valid AsyncAPI 3.0: channels are topics, messages the types, operations sends and receives", async () => {
    const document = buildAsyncApiDocument(paymentsExample, loadConfig(EXAMPLE_ENV));
    assert.deepEqual(await problems(document), []);
    const parsed = (await parser().parse(JSON.stringify(document))).document!;
    assert.deepEqual(parsed.channels().all().map((c) => c.address()).sort(), ['orders.events', 'payments.events']);
    assert.deepEqual(parsed.operations().all().map((o) => `${o.action()} ${o.channels().all()[0]!.address()} ${o.messages().all().map((m) => m.name()).join(',')}`).sort(), [
      'receive orders.events order_shipped',
      'receive payments.events payment_confirmed',
      'send orders.events order_shipped',
      'send payments.events payment_confirmed',
    ]);
    const credit = parsed.messages().all().find((m) => m.name() === 'payment_confirmed')!;
    assert.deepEqual(credit.payload()!.required(), ['event_id', 'account_id', 'amount']);
    assert.equal(credit.payload()!.properties()!.amount!.type(), 'integer');
  });

  it('the committed example document is what the code produces now', () => {
    const fresh = `${JSON.stringify(buildAsyncApiDocument(paymentsExample, loadConfig(EXAMPLE_ENV)), null, 2)}\n`;
    assert.equal(fs.readFileSync(COMMITTED, 'utf8'), fresh, 'examples/payments/asyncapi.json is stale: regenerate it (command at the top of this test)');
  });

  it('`temporal-outbox asyncapi --module` writes that document', async () => {
    const out = path.join(os.tmpdir(), `asyncapi-${process.pid}.json`);
    try {
      await promisify(execFile)(process.execPath, ['--import', 'tsx', ...nodeScript('src/cli/main.ts'), 'asyncapi', '--module', 'examples/payments/asyncapi.ts', '--out', out], {
        cwd: PROJECT_ROOT,
        env: { PATH: process.env.PATH, ...EXAMPLE_ENV },
        timeout: 30_000,
      });
      assert.equal(fs.readFileSync(out, 'utf8'), fs.readFileSync(COMMITTED, 'utf8'));
    } finally {
      fs.rmSync(out, { force: true });
    }
  });

  it('every version of a type is a message; the send is the newest, the receive reads them all', async () => {
    const document = buildAsyncApiDocument({ events: [OrderPlacedV2], handlers: [placedOrderHandler] }, loadConfig({ KAFKA_TOPIC: 'orders' }));
    assert.deepEqual(await problems(document), []);
    const operations = document.operations as Record<string, { messages: { $ref: string }[] }>;
    assert.deepEqual(operations.send_order_placed!.messages, [{ $ref: '#/channels/orders/messages/order_placed.v2' }]);
    assert.deepEqual(operations.receive_order_placed!.messages.map((m) => m.$ref), ['#/channels/orders/messages/order_placed.v1', '#/channels/orders/messages/order_placed.v2']);
    const messages = (document.components as { messages: Record<string, { headers: { properties: Record<string, unknown> }; payload: { required: string[] } }> }).messages;
    assert.deepEqual(messages['order_placed.v2']!.headers.properties['event-version'], { type: 'string', const: '2', description: 'The schema version' });
    assert.deepEqual(messages['order_placed.v1']!.payload.required, ['event_id', 'order_id', 'customer', 'total']);
    assert.deepEqual(messages['order_placed.v2']!.payload.required, ['event_id', 'order_id', 'first_name', 'last_name', 'total_minor']);
  });

  it('the formats on each topic: registry binding, CloudEvents headers (binary) and envelope (structured); plain topics unchanged', async () => {
    const env = {
      KAFKA_TOPIC: 'payments.events',
      KAFKA_TOPIC_ROUTES: 'order_shipped=orders.events,order_placed=placed.events',
      CLOUDEVENTS_TOPICS: 'orders.events=binary,placed.events=structured',
      SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1/apis/ccompat/v7',
      SCHEMA_REGISTRY_TOPICS: 'payments.events=avro',
    };
    const source = { ...paymentsExample, events: [...paymentsExample.events, OrderPlacedV2] };
    const document = buildAsyncApiDocument(source, loadConfig(env));
    assert.deepEqual(await problems(document), []);
    type Message = { contentType: string; bindings?: { kafka: Record<string, unknown> }; headers: { properties: Record<string, unknown>; required: string[] }; payload: { properties: Record<string, unknown>; required: string[] } };
    const messages = (document.components as { messages: Record<string, Message> }).messages;
    const credit = messages['payment_confirmed.v1']!;
    assert.equal(credit.contentType, 'application/vnd.apache.avro+binary');
    assert.deepEqual([credit.bindings!.kafka.schemaIdLocation, credit.bindings!.kafka.schemaIdPayloadEncoding, credit.bindings!.kafka.schemaLookupStrategy], ['payload', 'confluent', 'TopicIdStrategy']);
    assert.equal(credit.headers.properties.ce_id, undefined);
    const shipped = messages['order_shipped.v1']!;
    assert.deepEqual(shipped.headers.properties.ce_type, { type: 'string', const: 'order_shipped' });
    assert.ok(['ce_specversion', 'ce_id', 'ce_source', 'ce_type'].every((h) => shipped.headers.required.includes(h)));
    assert.equal(shipped.contentType, 'application/json');
    const placed = messages['order_placed.v2']!;
    assert.equal(placed.contentType, 'application/cloudevents+json; charset=UTF-8');
    assert.deepEqual(placed.payload.required, ['specversion', 'id', 'source', 'type', 'data']);
    assert.deepEqual((placed.payload.properties.data as { required: string[] }).required, ['event_id', 'order_id', 'first_name', 'last_name', 'total_minor']);
    // Without the format settings the same types are plain JSON messages.
    const plain = (buildAsyncApiDocument(source, loadConfig({ KAFKA_TOPIC: 'payments.events', KAFKA_TOPIC_ROUTES: env.KAFKA_TOPIC_ROUTES })).components as { messages: Record<string, Message> }).messages;
    assert.equal(plain['payment_confirmed.v1']!.contentType, 'application/json');
    assert.equal(plain['order_shipped.v1']!.headers.properties.ce_type, undefined);
    assert.equal(plain['order_placed.v2']!.contentType, 'application/json');
  });

  it("an Avro topic's messages carry each version's own Avro record, which the Avro schema parser reads", async () => {
    const env = { KAFKA_TOPIC: 'payments.events', KAFKA_TOPIC_ROUTES: 'order_packed=packed.events', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1/apis/ccompat/v7', SCHEMA_REGISTRY_TOPICS: 'packed.events=avro,payments.events=avro' };
    const document = buildAsyncApiDocument({ events: [OrderPackedV2, ...paymentsExample.events] }, loadConfig(env));
    assert.deepEqual(await problems(document), []);
    type Message = { contentType: string; payload: { schemaFormat?: string; schema?: { fields: { name: string }[] } } };
    const messages = (document.components as { messages: Record<string, Message> }).messages;
    assert.deepEqual(messages['order_packed.v1']!.payload.schema!.fields.map((f) => f.name), ['event_id', 'type', 'order_id', 'boxes']);
    assert.deepEqual(messages['order_packed.v2']!.payload.schema!.fields.map((f) => f.name), ['event_id', 'type', 'order_id', 'boxes', 'weight_grams']);
    assert.match(messages['order_packed.v2']!.payload.schemaFormat!, /^application\/vnd\.apache\.avro/);
    // A version without its own record keeps the decoded value's JSON Schema (the subject's latest schema is the registry's).
    assert.equal(messages['payment_confirmed.v1']!.payload.schemaFormat, undefined);
    assert.deepEqual((messages['payment_confirmed.v1']!.payload as { required?: string[] }).required, ['event_id', 'account_id', 'amount']);
    // The parser reads the record as Avro: a long field is an integer of the payload.
    const parsed = (await parser().parse(JSON.stringify(document))).document!;
    const packed = parsed.messages().all().find((m) => m.id() === 'order_packed.v2')!;
    assert.equal(packed.payload()!.properties()!.weight_grams!.type(), 'integer');
  });

  it('the validation can fail: an Avro payload that is no Avro schema is an error', async () => {
    const env = { KAFKA_TOPIC: 'packed.events', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1/apis/ccompat/v7', SCHEMA_REGISTRY_TOPICS: 'packed.events=avro' };
    const document = buildAsyncApiDocument({ events: [OrderPackedV2] }, loadConfig(env)) as { components: { messages: Record<string, { payload: { schema: { fields: unknown } } }> } };
    document.components.messages['order_packed.v2']!.payload.schema.fields = 'none';
    assert.notDeepEqual(await problems(document), []);
    // The document holds a copy of the type's record: changing it leaves the type as it was.
    assert.ok(Array.isArray((OrderPackedV2.versions[1]!.avroSchema as { fields: unknown }).fields));
  });

  it('the validation can fail: an operation on a channel that does not exist is an error', async () => {
    const document = buildAsyncApiDocument(paymentsExample, loadConfig(EXAMPLE_ENV)) as { operations: Record<string, { channel: { $ref: string } }> };
    document.operations.send_payment_confirmed!.channel.$ref = '#/channels/nowhere';
    assert.notDeepEqual(await problems(document), []);
  });
});

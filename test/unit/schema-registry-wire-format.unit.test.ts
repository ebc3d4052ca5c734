import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineEvent } from '../../src/events/define-event';
import { loadConfig } from '../../src/config/env';
import { codecFor } from '../../src/formats/registry/codecs';
import { decodeFramedValues, describeFramedValue } from '../../src/formats/registry/consumer-decoding';
import { RegistryEncoder } from '../../src/formats/registry/encoder';
import { SchemaCatalog } from '../../src/formats/registry/catalog';
import { schemaCatalogFromEvents } from '../../src/formats/registry/event-schemas';
import { recordNameOf, subjectFor } from '../../src/formats/registry/subjects';
import { frameValue, isFramed, unframeValue } from '../../src/formats/registry/wire-format';
import { validateEnvelope } from '../../src/inbox/validate-envelope';
import { CREDIT_AVRO } from '../fixtures/events/credit-avro';
import { OrderPackedV2 } from '../fixtures/events/order-packed';
import { OrderPlacedV2 } from '../fixtures/events/order-placed';

// The Confluent wire format, checked byte for byte against its specification (magic byte 0, the
// schema id as a 4-byte big-endian integer, then the body) and the Avro binary encoding (strings:
// zigzag-varint length then UTF-8; longs: zigzag varint; record fields in schema order).

const payload = { event_id: 'e1', type: 't', account_id: 42, amount: 500 };
const settings = { url: 'http://127.0.0.1:1', topics: { 'payments.events': 'avro' as const }, subjectNaming: 'topic' as const, requestTimeoutMs: 1000 };

describe('Schema Registry wire format', () => {
  it('frames an Avro body as magic byte, big-endian schema id, Avro binary', () => {
    const writer = { subject: 'payments.events-value', schemaId: 7, codec: codecFor('AVRO', JSON.stringify(CREDIT_AVRO)) };
    const encoded = new RegistryEncoder(settings).encode(writer, payload, JSON.stringify(payload));
    assert.ok(encoded.ok);
    // prettier-ignore
    const expected = Buffer.from([
      0x00,                   // magic byte
      0x00, 0x00, 0x00, 0x07, // schema id 7, big-endian
      0x04, 0x65, 0x31,       // "e1": length 2 zigzag = 4, then the bytes
      0x02, 0x74,             // "t"
      0x54,                   // 42 zigzag = 84
      0xe8, 0x07,             // 500 zigzag = 1000 = 0x68 | continuation, then 7
    ]);
    assert.deepEqual(encoded.value, expected);
  });

  it('frames a JSON Schema body as magic byte, schema id, the JSON text unchanged', () => {
    const text = '{"event_id":"e1","type":"t"}';
    const writer = { subject: 's', schemaId: 0x01020304, codec: codecFor('JSON', '{}') };
    const encoded = new RegistryEncoder(settings).encode(writer, JSON.parse(text), text);
    assert.ok(encoded.ok);
    assert.deepEqual(encoded.value, Buffer.concat([Buffer.from([0, 1, 2, 3, 4]), Buffer.from(text)]));
  });

  it('reads back the id and body, and tells framed values from JSON by the first byte', () => {
    const framed = frameValue(0xfffffffe, Buffer.from('x'));
    assert.deepEqual(unframeValue(framed), { schemaId: 0xfffffffe, body: Buffer.from('x') });
    assert.equal(isFramed(framed), true);
    assert.equal(isFramed(Buffer.from('{"event_id":"e"}')), false);
    assert.equal(isFramed(Buffer.from([0, 0, 0])), false, 'too short to hold an id');
    assert.throws(() => frameValue(2 ** 32, Buffer.alloc(0)), /does not fit/);
  });

  it('decodes an Avro value into the same plain object the JSON text gives', () => {
    const codec = codecFor('AVRO', JSON.stringify(CREDIT_AVRO));
    const written = codec.write(payload, JSON.stringify(payload));
    assert.ok(written.ok);
    const read = codec.read(written.body);
    assert.deepEqual(read, payload);
    assert.equal(Object.getPrototypeOf(read), Object.prototype);
  });

  it("refuses a payload that does not fit the Avro schema with the encoder's reason", () => {
    const writer = { subject: 'payments.events-value', schemaId: 7, codec: codecFor('AVRO', JSON.stringify(CREDIT_AVRO)) };
    const encoder = new RegistryEncoder(settings);
    const wrongType = encoder.encode(writer, { ...payload, amount: 'lots' }, '');
    assert.deepEqual(wrongType, { ok: false, reason: 'payload does not fit the Avro schema payments.PaymentConfirmed: amount (got "lots") (subject payments.events-value, schema id 7)' });
    const extra = encoder.encode(writer, { ...payload, note: 'x' }, '');
    // Avro would drop an undeclared field silently, so it is refused.
    assert.deepEqual(extra, { ok: false, reason: 'payload does not fit the Avro schema payments.PaymentConfirmed: the payload (undeclared field note) (subject payments.events-value, schema id 7)' });
  });

  it('a consumer without the registry parks a framed value with the schema id and the setting to configure', async () => {
    const framed = { value: frameValue(7, Buffer.from([4, 0x65, 0x31])) };
    const plain = { value: Buffer.from(JSON.stringify(payload)) };
    assert.equal(await decodeFramedValues(undefined, 'payments.events', [plain]), undefined, 'plain JSON chunks take the usual path');
    const out = await decodeFramedValues(undefined, 'payments.events', [plain, framed]);
    assert.deepEqual(out, [
      undefined,
      { ok: false, reason: 'value is Confluent Schema Registry wire format (schema id 7), not JSON; configure SCHEMA_REGISTRY_URL (kafka.schemaRegistry.url) for topic payments.events' },
    ]);
    assert.match(validateEnvelope(framed).ok ? '' : 'malformed', /malformed/, 'without the call-out the same value is only "malformed JSON"');
    assert.equal(describeFramedValue(framed.value), '[Confluent wire format, schema id 7, 3 bytes, base64] BGUx');
  });

  it('names subjects as the Confluent strategies do', () => {
    assert.equal(subjectFor('topic', 'payments.events', recordNameOf(CREDIT_AVRO, 'payment_confirmed')), 'payments.events-value');
    assert.equal(subjectFor('record', 'payments.events', recordNameOf(CREDIT_AVRO, 'payment_confirmed')), 'payments.PaymentConfirmed');
    assert.equal(subjectFor('topic-record', 'payments.events', recordNameOf({ title: 'Shipped' }, 'order_shipped')), 'payments.events-Shipped');
    assert.equal(subjectFor('topic-record', 'orders', recordNameOf({ type: 'object' }, 'order_shipped')), 'orders-order_shipped');
  });

  it('a catalog gives the topic’s own schema first, then the highest version', () => {
    const catalog = new SchemaCatalog([
      { eventType: 'a', version: 1, avroSchema: { type: 'record', name: 'A1', fields: [] } },
      { eventType: 'a', version: 2, avroSchema: { type: 'record', name: 'A2', fields: [] } },
      { eventType: 'a', version: 1, topic: 't', avroSchema: { type: 'record', name: 'At', fields: [] } },
    ]);
    assert.equal((catalog.find('other', 'a', 'avro')?.avroSchema as { name: string }).name, 'A2');
    assert.equal((catalog.find('t', 'a', 'avro')?.avroSchema as { name: string }).name, 'At');
    assert.equal(catalog.find('t', 'a', 'json-schema'), undefined);
    assert.throws(() => catalog.register({ eventType: 'a', version: 2, avroSchema: {} }), /already has a schema/);
  });

  it('a row is encoded with the schema of the version it was written as: no header is the first version, an undeclared newer one the highest', () => {
    const catalog = new SchemaCatalog([
      { eventType: 'a', version: 1, avroSchema: { type: 'record', name: 'A1', fields: [] } },
      { eventType: 'a', version: 2, avroSchema: { type: 'record', name: 'A2', fields: [] } },
    ]);
    const name = (written: number | undefined) => (catalog.forWritten('t', 'a', 'avro', written)?.avroSchema as { name: string }).name;
    assert.deepEqual([name(undefined), name(1), name(2), name(3)], ['A1', 'A1', 'A2', 'A2']);
    assert.equal(catalog.forWritten('t', 'b', 'avro', undefined), undefined);
  });

  it('event types give one JSON Schema entry per version, the envelope included, checked by that version', () => {
    const catalog = schemaCatalogFromEvents([OrderPlacedV2]);
    const v1 = catalog.forWritten('orders', 'order_placed', 'json-schema', undefined)!;
    const v2 = catalog.forWritten('orders', 'order_placed', 'json-schema', 2)!;
    assert.deepEqual([v1.version, v2.version], [1, 2]);
    assert.deepEqual((v1.jsonSchema as { required: string[] }).required, ['event_id', 'order_id', 'customer', 'total']);
    assert.deepEqual(Object.keys((v2.jsonSchema as { properties: object }).properties), ['event_id', 'type', 'order_id', 'first_name', 'last_name', 'total_minor', 'currency']);
    const v1Event = { event_id: 'e', type: 'order_placed', order_id: 'o', customer: 'Ada', total: 5 };
    assert.equal(v1.validate!(v1Event), undefined);
    assert.equal(v2.validate!(v1Event), 'order_placed v2: first_name: Invalid input: expected string, received undefined; last_name: Invalid input: expected string, received undefined; total_minor: Invalid input: expected number, received undefined');
    assert.equal(catalog.forWritten('orders', 'order_placed', 'avro', 1), undefined, 'a type that declares no Avro has no Avro entry');
  });

  it('a version that declares its Avro record gives an Avro entry too; a schema that is no Avro record is refused when the type is defined', () => {
    const catalog = schemaCatalogFromEvents([OrderPackedV2]);
    const fields = (written: number | undefined) => (catalog.forWritten('t', 'order_packed', 'avro', written)?.avroSchema as { fields: { name: string }[] }).fields.map((f) => f.name);
    assert.deepEqual(fields(undefined), ['event_id', 'type', 'order_id', 'boxes']);
    assert.deepEqual(fields(2), ['event_id', 'type', 'order_id', 'boxes', 'weight_grams']);
    const schema = z.object({ n: z.int() });
    assert.throws(() => defineEvent({ type: 'x', schema, avroSchema: { type: 'record', name: 'X', fields: [{ name: 'n', type: 'lng' }] } }), /event x v1: avroSchema is no Avro schema \(.*lng/);
    assert.throws(() => defineEvent({ type: 'x', schema, avroSchema: { type: 'string' } }), /event x v1: avroSchema must be an Avro record \(got string\)/);
    assert.throws(() => defineEvent({ type: 'x', schema, avroSchema: { type: 'record', name: 'X', fields: [{ name: 'event_id', type: 'string' }, { name: 'n', type: 'long' }] } }), /event x v1: avroSchema must declare the envelope field type$/);
  });

  it('is configured by SCHEMA_REGISTRY_* variables, every mistake reported', () => {
    const config = loadConfig({ SCHEMA_REGISTRY_URL: 'http://127.0.0.1:8081/apis/ccompat/v7', SCHEMA_REGISTRY_TOPICS: 'orders.events=avro, audit=json-schema' });
    assert.deepEqual(config.kafka.schemaRegistry, { url: 'http://127.0.0.1:8081/apis/ccompat/v7', topics: { 'orders.events': 'avro', audit: 'json-schema' }, subjectNaming: 'topic', requestTimeoutMs: 5000 });
    assert.equal(loadConfig({}).kafka.schemaRegistry, undefined);
    assert.throws(() => loadConfig({ SCHEMA_REGISTRY_URL: 'http://r', SCHEMA_REGISTRY_TOPICS: 'orders.events=protobuf,x' }), (err: Error) => /format "protobuf"/.test(err.message) && /"x" must look like topic=avro\|json-schema/.test(err.message));
    assert.throws(() => loadConfig({ SCHEMA_REGISTRY_TOPICS: 'orders.events=avro' }), /SCHEMA_REGISTRY_URL is not/);
  });
});

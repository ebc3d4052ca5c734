import assert from 'node:assert/strict';
import net from 'node:net';
import { SchemaCatalog } from '../../src/formats/registry/catalog';
import { RegistryUnavailableError, SchemaRegistryClient } from '../../src/formats/registry/client';
import { decodeFramedValues } from '../../src/formats/registry/consumer-decoding';
import { RegistryDecoder } from '../../src/formats/registry/decoder';
import { RegistryEncoder } from '../../src/formats/registry/encoder';
import { encodeWithRegistry, type EncodableItem } from '../../src/formats/registry/relay-encoding';
import { unframeValue } from '../../src/formats/registry/wire-format';
import { uniqueName } from '../kit/ids';
import { testSchemaRegistry } from '../kit/schema-registry';

// The registry client, encoder and decoder against a real registry (the local stack's Apicurio
// Registry, through its Confluent-compatible API): schemas declared in code are registered once and
// their ids used; JSON Schema values are checked by the type's own validator; a registry that does
// not answer fails within the request bound as a transient error, never as a parked row.

const item = (id: number, eventType: string, payload: object): EncodableItem & { topic: string } => {
  const value = JSON.stringify(payload);
  return { topic: '', row: { id, eventType, value }, message: { value }, bytes: 200 + value.length };
};

describe('Schema Registry client, encoder and decoder on a real registry', function () {
  this.timeout(120_000);
  let registry: { url: string; stop: () => Promise<void> };

  before(async function () {
    this.timeout(20 * 60_000);
    registry = await testSchemaRegistry();
  });
  after(async () => registry?.stop());

  it('registers a declared Avro schema under topic-record naming, encodes with its id and decodes back to the same payload', async () => {
    const topic = uniqueName('sr-orders');
    const avroSchema = { type: 'record', name: 'OrderPlaced', namespace: 'shop', fields: [{ name: 'event_id', type: 'string' }, { name: 'type', type: 'string' }, { name: 'total', type: 'long' }] };
    const catalog = new SchemaCatalog([{ eventType: 'order_placed', version: 1, avroSchema }]);
    const settings = { url: registry.url, topics: { [topic]: 'avro' as const }, subjectNaming: 'topic-record' as const, requestTimeoutMs: 10_000 };
    const encoder = new RegistryEncoder(settings, catalog);
    const payloads = [1, 2, 3].map((i) => ({ event_id: `o-${i}`, type: 'order_placed', total: i * 100 }));
    const { sendable, refused } = await encodeWithRegistry(encoder, payloads.map((p, i) => item(i + 1, 'order_placed', p)), () => topic, 1_000_000);
    assert.deepEqual(refused, []);

    const latest = await new SchemaRegistryClient(settings).latest(`${topic}-shop.OrderPlaced`);
    assert.deepEqual(JSON.parse(latest.schema), avroSchema, 'the declared schema is what the registry holds under the subject');
    for (const s of sendable) assert.equal(unframeValue(s.message.value as Buffer).schemaId, latest.id);
    assert.equal(encoder.writerFor(topic, 'order_placed', 'avro'), encoder.writerFor(topic, 'order_placed', 'avro'), 'one lookup per topic and type, cached');

    const decoded = await decodeFramedValues(new RegistryDecoder(settings), topic, sendable.map((s) => ({ value: s.message.value as Buffer })));
    assert.deepEqual(
      decoded?.map((d) => d?.ok && d.payload),
      payloads,
    );
  });

  it('registers two versions of a type under one subject at once without either being refused', async () => {
    // Apicurio refuses one of two registrations that race under a subject; the encoder takes them
    // in turn. Twelve topics at once, each with a v1 and a v2 row in one batch.
    const topics = Array.from({ length: 12 }, () => uniqueName('sr-versions'));
    const record = (name: string, extra: object[] = []) => ({ type: 'record', name, fields: [{ name: 'event_id', type: 'string' }, { name: 'type', type: 'string' }, ...extra] });
    const catalog = new SchemaCatalog([
      { eventType: 'parcel', version: 1, avroSchema: record('Parcel') },
      { eventType: 'parcel', version: 2, avroSchema: record('Parcel', [{ name: 'grams', type: 'long', default: 0 }]) },
    ]);
    const encoder = new RegistryEncoder({ url: registry.url, topics: Object.fromEntries(topics.map((t) => [t, 'avro' as const])), subjectNaming: 'topic', requestTimeoutMs: 10_000 }, catalog);
    const results = await Promise.all(
      topics.map((topic) => {
        const v1 = { ...item(1, 'parcel', { event_id: 'p-1', type: 'parcel' }), topic };
        const v2 = { ...item(2, 'parcel', { event_id: 'p-2', type: 'parcel', grams: 5 }), topic };
        v2.message.headers = { 'event-version': '2' };
        return encodeWithRegistry(encoder, [v1, v2], (i) => i.topic, 1_000_000);
      }),
    );
    assert.deepEqual(results.map((r) => r.refused), topics.map(() => []));
    for (const r of results) assert.notEqual(unframeValue(r.sendable[0]!.message.value as Buffer).schemaId, unframeValue(r.sendable[1]!.message.value as Buffer).schemaId, 'each version its own schema');
  });

  it('frames JSON Schema values, refusing the ones the type’s validator refuses', async () => {
    const topic = uniqueName('sr-audit');
    const jsonSchema = { type: 'object', title: 'AuditNoted', required: ['event_id', 'who'], properties: { event_id: { type: 'string' }, who: { type: 'string' } } };
    const validate = (p: Record<string, unknown>) => (typeof p.who === 'string' ? undefined : 'who must be a string');
    const encoder = new RegistryEncoder({ url: registry.url, topics: { [topic]: 'json-schema' }, subjectNaming: 'topic', requestTimeoutMs: 10_000 }, new SchemaCatalog([{ eventType: 'audit_noted', jsonSchema, validate }]));
    const good = { event_id: 'a-1', type: 'audit_noted', who: 'ops' };
    const { sendable, refused } = await encodeWithRegistry(encoder, [item(1, 'audit_noted', good), item(2, 'audit_noted', { event_id: 'a-2', type: 'audit_noted', who: 7 })], () => topic, 1_000_000);
    assert.equal(refused.length, 1);
    assert.match(refused[0]!.reason, new RegExp(`^payload does not fit its JSON Schema: who must be a string \\(subject ${topic}-value, schema id \\d+\\)$`));
    const { schemaId, body } = unframeValue(sendable[0]!.message.value as Buffer);
    assert.equal(body.toString(), JSON.stringify(good));
    assert.equal((await new SchemaRegistryClient({ url: registry.url, requestTimeoutMs: 10_000 }).byId(schemaId)).schemaType, 'JSON');
  });

  it('a type with no schema in code or in the registry is refused with the registry’s answer (parked), not retried', async () => {
    const topic = uniqueName('sr-none');
    const encoder = new RegistryEncoder({ url: registry.url, topics: { [topic]: 'avro' }, subjectNaming: 'topic', requestTimeoutMs: 10_000 });
    const { sendable, refused } = await encodeWithRegistry(encoder, [item(9, 'unknown_type', { event_id: 'u', type: 'unknown_type' })], () => topic, 1_000_000);
    assert.equal(sendable.length, 0);
    assert.match(refused[0]!.reason, new RegExp(`subjects/${topic}-value/versions/latest answered 404`));
  });

  it('a registry that never answers fails within the request bound, as a transient error on both sides', async () => {
    // Accepts connections and never answers: the worst kind of unreachable.
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    try {
      const encoder = new RegistryEncoder({ url, topics: { t: 'avro' }, subjectNaming: 'topic', requestTimeoutMs: 300 });
      const started = Date.now();
      await assert.rejects(encodeWithRegistry(encoder, [item(1, 'x', { event_id: 'x' })], () => 't', 1_000_000), (err: Error) => err instanceof RegistryUnavailableError && /no answer within 300 ms/.test(err.message));
      await assert.rejects(decodeFramedValues(new RegistryDecoder({ url, requestTimeoutMs: 300 }), 't', [{ value: Buffer.from([0, 0, 0, 0, 1, 2]) }]), RegistryUnavailableError);
      assert.ok(Date.now() - started < 3_000, `both calls gave up within their bound (${Date.now() - started} ms)`);
    } finally {
      silent.close();
    }
  });
});

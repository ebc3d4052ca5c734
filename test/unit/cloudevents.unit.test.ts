import assert from 'node:assert/strict';
import { CloudEvent, Kafka, type KafkaMessage } from 'cloudevents';
import { resolveConfig } from '../../src/config/resolve';
import { loadConfig } from '../../src/config/env';
import { resolveCloudEvents } from '../../src/formats/cloudevents/settings';
import { validateEnvelope, type RawMessage } from '../../src/inbox/validate-envelope';
import { toKafkaMessage, type OutboxKafkaMessage } from '../../src/outbox/kafka-message';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';

// The CloudEvents Kafka binding both ways, against the `cloudevents` SDK: what our relay builds
// the SDK reads as the right event, what the SDK writes our consumer reads as the same event as
// our own format, and a CloudEvent we cannot read is refused with a reason that says why.
// (test/integration/cloudevents.integration.test.ts does the same through Kafka, Temporal and PostgreSQL.)

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const row = (over: Partial<PendingRow> = {}): PendingRow => ({
  id: 7,
  eventType: 'payment_confirmed',
  messageKey: '42',
  headers: { traceparent: TRACEPARENT },
  createdAt: '2026-01-02T03:04:05.678Z',
  attempts: 0,
  payloadKind: 'object',
  eventId: 'evt-1',
  payloadType: 'payment_confirmed',
  value: '{"type": "payment_confirmed", "amount": 5, "event_id": "evt-1", "account_id": 42}',
  ...over,
});
const settings = resolveCloudEvents({ topics: {}, source: '/payments' }, 'temporal_outbox');
const build = (mode: 'binary' | 'structured', r = row(), s = settings): OutboxKafkaMessage => {
  const check = toKafkaMessage(r, 1_000_000, { mode, settings: s });
  assert.ok(check.ok, JSON.stringify(check));
  return check.message;
};
/** As a consumer gets it from kafkajs: header values are Buffers. */
const received = (m: { value: unknown; headers: Record<string, unknown> }): RawMessage => ({
  value: Buffer.from(typeof m.value === 'string' ? m.value : JSON.stringify(m.value)),
  headers: Object.fromEntries(Object.entries(m.headers).filter(([, v]) => v !== undefined).map(([k, v]) => [k, Buffer.from(String(v))])),
});
const sdkRead = (m: OutboxKafkaMessage) => Kafka.toEvent({ key: m.key, value: m.value, headers: m.headers, body: m.value } as KafkaMessage<string>) as CloudEvent<unknown>;

describe('CloudEvents Kafka binding (unit)', () => {
  for (const mode of ['binary', 'structured'] as const) {
    it(`${mode} mode: the SDK reads the relay's message as the event (id, type, source, time, data, key, traceparent)`, () => {
      const message = build(mode);
      assert.equal(message.key, '42', 'the key is unchanged');
      const event = sdkRead(message);
      assert.equal(event.validate(), true);
      assert.equal(event.specversion, '1.0');
      assert.equal(event.id, 'evt-1');
      assert.equal(event.type, 'payment_confirmed');
      assert.equal(event.source, '/payments');
      assert.equal(event.time, '2026-01-02T03:04:05.678Z');
      assert.equal(event.datacontenttype, 'application/json');
      assert.deepEqual(event.data, { type: 'payment_confirmed', amount: 5, event_id: 'evt-1', account_id: 42 });
      assert.equal(event.subject, undefined);
      assert.equal(event.traceparent, TRACEPARENT, 'the distributed tracing extension: the context the event was created in');
      // Our own headers stay, for the audit and the tools.
      assert.equal(message.headers['event-id'], 'evt-1');
      assert.equal(message.headers['outbox-id'], '7');
      assert.equal(message.headers.traceparent, TRACEPARENT);
    });

    it(`${mode} mode: the consumer reads the relay's message as the same event as the plain format`, () => {
      const plain = toKafkaMessage(row(), 1_000_000);
      assert.ok(plain.ok);
      const ours = validateEnvelope(received(plain.message));
      const ce = validateEnvelope(received(build(mode)));
      assert.ok(ours.ok && ce.ok);
      assert.deepEqual({ ...ce, traceparent: undefined }, { ...ours, traceparent: undefined });
    });

    it(`${mode} mode: the consumer reads what the SDK writes (data without event_id), with its tracing extension`, () => {
      const event = new CloudEvent({ id: 'sdk-1', source: 'https://other.example/svc', type: 'payment_confirmed', time: '2026-02-03T04:05:06.000Z', datacontenttype: 'application/json', data: { account_id: 3, amount: 250 }, traceparent: TRACEPARENT });
      const written = mode === 'binary' ? Kafka.binary(event) : Kafka.structured(event);
      const result = validateEnvelope(received({ value: written.value, headers: written.headers as Record<string, unknown> }));
      assert.deepEqual(result, { ok: true, eventId: 'sdk-1', eventType: 'payment_confirmed', payload: { account_id: 3, amount: 250 }, traceparent: TRACEPARENT });
    });
  }

  it('subject and dataschema: from the settings (the key, a schema per type), a row header wins', () => {
    const s = resolveCloudEvents({ topics: {}, subject: 'key', dataSchemas: { payment_confirmed: 'https://schemas.example/payment_confirmed/1' } }, 'billing');
    for (const mode of ['binary', 'structured'] as const) {
      const event = sdkRead(build(mode, row(), s));
      assert.equal(event.source, 'urn:temporal-outbox:billing', 'the default source names the outbox');
      assert.equal(event.subject, '42');
      assert.equal(event.dataschema, 'https://schemas.example/payment_confirmed/1');
      const own = sdkRead(build(mode, row({ headers: { ce_subject: 'account/42', ce_source: '/billing/eu', ce_region: 'eu' } }), s));
      assert.equal(own.subject, 'account/42');
      assert.equal(own.source, '/billing/eu');
      assert.equal(own.region, 'eu', 'a producer extension attribute');
      assert.equal(own.id, 'evt-1');
    }
  });

  it('counts the structured envelope in the size check', () => {
    const value = `{"event_id": "evt-1", "pad": "${'x'.repeat(800)}"}`;
    assert.ok(toKafkaMessage(row({ value, payloadType: null }), 1200).ok);
    const check = toKafkaMessage(row({ value, payloadType: null }), 1200, { mode: 'structured', settings });
    assert.equal(check.ok, false);
  });

  it('parks a CloudEvent it cannot read with a specific reason', () => {
    const structured = (event: unknown, contentType = 'application/cloudevents+json') => validateEnvelope({ value: JSON.stringify(event), headers: { 'content-type': contentType } });
    const binary = (headers: Record<string, string>, value = '{"account_id": 1, "amount": 1}') => validateEnvelope({ value, headers: { 'content-type': 'application/json', ...headers } });
    const good = { specversion: '1.0', id: 'e-1', source: '/s', type: 'payment_confirmed', data: { account_id: 1, amount: 1 } };
    const reason = (r: ReturnType<typeof validateEnvelope>) => (r.ok ? 'accepted' : r.reason);
    assert.equal(reason(structured(good)), 'accepted');
    assert.equal(reason(structured({ ...good, id: undefined })), 'CloudEvent without id (id)');
    assert.equal(reason(structured({ ...good, specversion: '0.3' })), 'CloudEvents specversion "0.3" is not supported (only 1.0)');
    assert.equal(reason(structured({ ...good, specversion: undefined })), 'CloudEvent without specversion (specversion)');
    assert.equal(reason(structured({ ...good, source: undefined })), 'CloudEvent without source (source)');
    assert.equal(reason(structured({ ...good, data: undefined })), 'CloudEvent without data');
    assert.equal(reason(structured({ ...good, data: [1] })), 'CloudEvents data is not a JSON object');
    assert.equal(reason(structured({ ...good, datacontenttype: 'text/plain', data: 'hi' })), 'CloudEvents data of content type "text/plain" is not JSON');
    assert.equal(reason(structured({ ...good, data: { event_id: 'other' } })), 'CloudEvents id does not match data.event_id');
    assert.equal(reason(structured(good, 'application/cloudevents+avro')), 'CloudEvents structured mode in an event format other than JSON ("application/cloudevents+avro") is not read');
    assert.equal(reason(structured([good], 'application/cloudevents-batch+json')), 'CloudEvents batched mode ("application/cloudevents-batch+json") is not read: one event per message');
    assert.match(reason(validateEnvelope({ value: '{"specversion":', headers: { 'content-type': 'application/cloudevents+json' } })), /^CloudEvents structured mode: malformed JSON/);
    const ce = { ce_specversion: '1.0', ce_id: 'b-1', ce_source: '/s', ce_type: 'payment_confirmed' };
    assert.equal(reason(binary(ce)), 'accepted');
    assert.equal(reason(binary({ ...ce, ce_specversion: '0.3' })), 'CloudEvents specversion "0.3" is not supported (only 1.0)');
    assert.equal(reason(binary({ ...ce, ce_type: '' })), 'CloudEvent without type (header ce_type)');
    assert.equal(reason(binary({ ...ce, 'content-type': 'application/octet-stream' })), 'CloudEvents data of content type "application/octet-stream" is not JSON');
    assert.match(reason(binary(ce, 'not json')), /^CloudEvents binary mode: malformed JSON data/);
    assert.equal(reason(binary({ ...ce, 'event-id': 'spoofed' })), 'event id header does not match the payload event id');
    assert.equal(reason(binary({ ...ce, ce_id: 'x'.repeat(201) })), 'event id longer than 200 characters');
  });

  it('settings: CLOUDEVENTS_* variables, and what is wrong with them, all at once', () => {
    const config = loadConfig({ KAFKA_TOPIC: 'orders.events', KAFKA_TOPIC_ROUTES: 'audit=audit.events', CLOUDEVENTS_TOPICS: 'orders.events=binary,audit.events=structured', CLOUDEVENTS_SOURCE: '/orders', CLOUDEVENTS_SUBJECT: 'key', CLOUDEVENTS_DATASCHEMAS: 'order_placed=https://s/1' });
    assert.deepEqual(config.kafka.cloudEvents, { topics: { 'orders.events': 'binary', 'audit.events': 'structured' }, source: '/orders', subject: 'key', dataSchemas: { order_placed: 'https://s/1' } });
    assert.deepEqual(loadConfig({}).kafka.cloudEvents, { topics: {}, source: 'urn:temporal-outbox:temporal_outbox', subject: 'none', dataSchemas: {} });
    assert.throws(() => loadConfig({ CLOUDEVENTS_TOPICS: 'nope' }), /"nope" must look like topic=binary\|structured/);
    assert.throws(
      () => resolveConfig({ kafka: { topic: 't', cloudEvents: { topics: { t: 'avro' as 'binary', elsewhere: 'binary' } } } }),
      (err: Error) => /mode of t must be binary or structured/.test(err.message) && /the relay publishes nothing to elsewhere/.test(err.message),
    );
  });

  it('refuses a topic listed for both CloudEvents and the Schema Registry', () => {
    const both = { KAFKA_TOPIC: 'orders.events', CLOUDEVENTS_TOPICS: 'orders.events=binary', SCHEMA_REGISTRY_URL: 'http://127.0.0.1:1/apis/ccompat/v7' };
    assert.doesNotThrow(() => loadConfig({ ...both, SCHEMA_REGISTRY_TOPICS: 'other.events=avro', KAFKA_TOPIC_ROUTES: 'x=other.events' }));
    assert.throws(() => loadConfig({ ...both, SCHEMA_REGISTRY_TOPICS: 'orders.events=avro' }), /topic orders.events is listed for both the Schema Registry .* and CloudEvents/);
  });
});

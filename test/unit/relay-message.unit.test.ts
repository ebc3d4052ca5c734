import assert from 'node:assert/strict';
import { isRecordRejection } from '../../activities/relay/send-errors';
import { HEADERS } from '../../src/kafka/message-format';
import { toKafkaMessage } from '../../src/outbox/kafka-message';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';

const row = (over: Partial<PendingRow> = {}): PendingRow => ({
  id: 7,
  eventType: 'payment_confirmed',
  messageKey: '42',
  headers: {},
  createdAt: '2026-01-02T03:04:05.678Z',
  attempts: 0,
  payloadKind: 'object',
  eventId: 'evt-1',
  payloadType: null,
  value: '{"amount": 5, "event_id": "evt-1"}',
  ...over,
});

describe('relay message building (unit)', () => {
  it('refuses an event_type that disagrees with the payload\'s own type, accepts an agreeing or absent one', () => {
    const check = toKafkaMessage(row({ eventType: 'payment_refunded', payloadType: 'payment_confirmed' }), 1_000_000);
    assert.deepEqual(check, { ok: false, reason: 'event_type "payment_refunded" disagrees with payload.type "payment_confirmed"' });
    assert.ok(toKafkaMessage(row({ eventType: 'payment_confirmed', payloadType: 'payment_confirmed' }), 1_000_000).ok);
    assert.ok(toKafkaMessage(row({ payloadType: null }), 1_000_000).ok);
    assert.deepEqual(toKafkaMessage(row({ eventType: ' ' }), 1_000_000), { ok: false, reason: 'event_type must not be empty' });
  });

  it('builds the contract message: key, value unchanged, four headers that win over producer headers', () => {
    const check = toKafkaMessage(row({ headers: { traceparent: 'x', [HEADERS.eventId]: 'spoofed' } }), 1_000_000);
    assert.ok(check.ok);
    assert.deepEqual(check.message, {
      key: '42',
      value: '{"amount": 5, "event_id": "evt-1"}',
      headers: { traceparent: 'x', 'event-id': 'evt-1', 'event-type': 'payment_confirmed', 'created-at': '2026-01-02T03:04:05.678Z', 'outbox-id': '7' },
    });
  });

  it('names what is wrong with a row that can never be published', () => {
    assert.deepEqual(toKafkaMessage(row({ payloadKind: 'array' }), 1e6), { ok: false, reason: 'payload must be a JSON object, got array' });
    assert.deepEqual(toKafkaMessage(row({ eventId: null }), 1e6), { ok: false, reason: 'payload.event_id must be a non-empty string' });
    const big = toKafkaMessage(row({ value: 'x'.repeat(2000) }), 1000);
    assert.equal(big.ok, false);
    assert.match((big as { reason: string }).reason, /exceeds the 1000-byte Kafka limit/);
  });

  it('falls back to the event id as key', () => {
    const check = toKafkaMessage(row({ messageKey: null }), 1e6);
    assert.ok(check.ok && check.message.key === 'evt-1');
  });

  it('tells a broker refusal of the records from a transient failure', () => {
    const tooLarge = Object.assign(new Error('too large'), { name: 'KafkaJSProtocolError', type: 'MESSAGE_TOO_LARGE', retriable: false });
    assert.equal(isRecordRejection(Object.assign(new Error('wrapped'), { name: 'KafkaJSNonRetriableError', cause: tooLarge })), true);
    const leader = Object.assign(new Error('leader'), { name: 'KafkaJSProtocolError', retriable: true });
    assert.equal(isRecordRejection(Object.assign(new Error('gave up'), { name: 'KafkaJSNumberOfRetriesExceeded', cause: leader })), false);
    assert.equal(isRecordRejection(Object.assign(new Error('refused'), { name: 'KafkaJSConnectionError' })), false);
  });
});

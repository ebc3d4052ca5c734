import assert from 'node:assert/strict';
import { canonicalJson, payloadHash } from '../../src/inbox/payload-hash';
import { validateEnvelope } from '../../src/inbox/validate-envelope';
import { paymentConfirmedHandler } from '../../examples/payments/credit-handler';
import { orderShippedHandler } from '../../examples/shipping/order-shipped-handler';

const credits = paymentConfirmedHandler({ maxCreditAmount: 1_000_000 });
/** Envelope first, then the credit handler's validate (the type's schema, then its limits): what the consumer does for payment_confirmed. */
const check = (value: unknown, headers?: Record<string, string>) => {
  const envelope = validateEnvelope({ value: typeof value === 'string' ? value : JSON.stringify(value), headers });
  if (!envelope.ok) return envelope;
  const credit = credits.validate(envelope.payload);
  return credit.ok ? { ok: true, eventId: envelope.eventId, eventType: envelope.eventType, data: credit.data } : credit;
};

describe('validateEnvelope + the payment_confirmed handler', () => {
  it('accepts the seed event; account ids come out as exact decimal strings', () => {
    assert.deepEqual(check({ event_id: 'evt_9f2', type: 'payment_confirmed', account_id: 42, amount: 500 }), {
      ok: true,
      eventId: 'evt_9f2',
      eventType: 'payment_confirmed',
      data: { account_id: '42', amount: 500 },
    });
  });

  it('accepts account ids beyond 2^53 when they travel as strings', () => {
    const r = check({ event_id: 'e', type: 'payment_confirmed', account_id: '9223372036854775807', amount: 1 });
    assert.deepEqual(r, { ok: true, eventId: 'e', eventType: 'payment_confirmed', data: { account_id: '9223372036854775807', amount: 1 } });
  });

  const bad: [string, unknown, RegExp][] = [
    ['malformed JSON', '{"event_id":', /^malformed JSON: /],
    ['not an object', '"just a string"', /^payload is not a JSON object$/],
    ['missing event id', { type: 'payment_confirmed', account_id: 1, amount: 1 }, /^missing event id$/],
    ['numeric event id', { event_id: 7, type: 'payment_confirmed', account_id: 1, amount: 1 }, /^event id must be a string$/],
    ['non-string type', { event_id: 'e', type: 7, account_id: 1, amount: 1 }, /^event type must be a string \(got 7\)$/],
    ['missing account', { event_id: 'e', type: 'payment_confirmed', amount: 1 }, /^payment_confirmed v1: account_id: missing$/],
    ['account too long', { event_id: 'e', type: 'payment_confirmed', account_id: '99999999999999999999', amount: 1 }, /^payment_confirmed v1: account_id: must be a positive integer/],
    ['account beyond bigint', { event_id: 'e', type: 'payment_confirmed', account_id: '9223372036854775808', amount: 1 }, /^account id 9223372036854775808 is beyond the largest bigint$/],
    ['fractional amount', { event_id: 'e', type: 'payment_confirmed', account_id: 1, amount: 0.5 }, /^payment_confirmed v1: amount: must be a positive safe integer in minor units \(got 0\.5\)$/],
    ['unsafe amount', { event_id: 'e', type: 'payment_confirmed', account_id: 1, amount: 2 ** 60 }, /^payment_confirmed v1: amount: must be a positive safe integer/],
    ['absurd amount', { event_id: 'e', type: 'payment_confirmed', account_id: 1, amount: 1_000_001 }, /^amount 1000001 exceeds the maximum credit of 1000000$/],
  ];
  for (const [name, value, reason] of bad) {
    it(`rejects ${name} with a specific reason`, () => {
      const r = check(value);
      assert.equal(r.ok, false);
      assert.match((r as { reason: string }).reason, reason);
    });
  }

  it('takes the type from the header when the payload has none', () => {
    const r = validateEnvelope({ value: JSON.stringify({ event_id: 'e', account_id: 1, amount: 1 }), headers: { 'event-type': 'payment_confirmed' } });
    assert.equal(r.ok && r.eventType, 'payment_confirmed');
  });
});

describe('the order_shipped handler', () => {
  const shipments = orderShippedHandler();
  it('accepts an order_shipped payload (the timestamp is normalised when applied)', () => {
    assert.deepEqual(shipments.validate({ event_id: 's', type: 'order_shipped', order_id: 'o-1', carrier: 'DHL', tracking_number: 'T1', shipped_at: '2026-12-03T10:00:00+01:00' }), {
      ok: true,
      data: { order_id: 'o-1', carrier: 'DHL', tracking_number: 'T1', shipped_at: '2026-12-03T10:00:00+01:00' },
    });
  });
  it('names the bad field', () => {
    assert.deepEqual(shipments.validate({ order_id: 'o-1', carrier: '', tracking_number: 'T1', shipped_at: '2026-12-03T10:00:00Z' }), {
      ok: false,
      reason: 'order_shipped v1: carrier: must be a non-empty string of at most 200 characters (got "")',
    });
    assert.deepEqual(shipments.validate({ order_id: 'o-1', carrier: 'DHL', tracking_number: 'T1', shipped_at: 'yesterday' }), {
      ok: false,
      reason: 'order_shipped v1: shipped_at: must be an ISO 8601 timestamp (got "yesterday")',
    });
  });
});

describe('payloadHash', () => {
  it('ignores key order and spacing, not values', () => {
    assert.equal(payloadHash({ a: 1, b: { c: [1, 2], d: 'x' } }), payloadHash(JSON.parse('{ "b": {"d":"x","c":[1,2]}, "a": 1 }')));
    assert.notEqual(payloadHash({ a: 1 }), payloadHash({ a: 2 }));
    assert.notEqual(payloadHash({ a: [1, 2] }), payloadHash({ a: [2, 1] }));
  });
  // Inbox rows keep these hashes and a redelivery is compared with them: a release that hashed
  // differently would park every redelivered event as a conflicting duplicate. Values computed by
  // the first release's implementation (Object.entries/sort, createHash).
  it('hashes exactly as earlier releases did (integer-like keys sort as text, escapes, nesting)', () => {
    assert.equal(payloadHash({ event_id: 'evt_9f2', type: 'payment_confirmed', account_id: 42, amount: 500 }), '4402db1cf881092b657910cb0433d602');
    const shipped = { type: 'order_shipped', event_id: 'o-1', data: { order_id: 'A-17', items: [{ sku: 'x', qty: 2 }, { qty: 1, sku: 'y' }], note: null, gift: false } };
    assert.equal(payloadHash(shipped), '8a0900000ec6553b75808a628a4583dc');
    const awkward = { event_id: 'u', type: 't', '10': 'ten', '2': 'two', b: 'Ω', a: 'é\u0000"\\', nested: { z: [1, 2.5, -0, 1e21], y: {} } };
    assert.equal(canonicalJson(awkward), '{"10":"ten","2":"two","a":"é\\u0000\\"\\\\","b":"Ω","event_id":"u","nested":{"y":{},"z":[1,2.5,0,1e+21]},"type":"t"}');
    assert.equal(payloadHash(awkward), '8cb4df4f138882b1e8b4a857d8f46c25');
  });
  it('writes every JSON value as a straightforward canonical writer does (nested objects and arrays, any key order, integer-like and __proto__ keys)', () => {
    const reference = (v: unknown): string => {
      if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
      if (Array.isArray(v)) return `[${v.map(reference).join(',')}]`;
      const o = v as Record<string, unknown>;
      return `{${Object.keys(o)
        .sort()
        .filter((k) => o[k] !== undefined)
        .map((k) => `${JSON.stringify(k)}:${reference(o[k])}`)
        .join(',')}}`;
    };
    const keys = ['b', 'a', 'event_id', 'type', 'amount', '__proto__', '7', '10', 'é', 'Z', 'a b', '"q"'];
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const randomValue = (depth: number): unknown => {
      const kind = next() % (depth > 2 ? 5 : 7);
      if (kind === 0) return null;
      if (kind === 1) return next() % 2 === 0;
      if (kind === 2) return (next() % 20001) - 10000 + (next() % 3 === 0 ? 0.25 : 0);
      if (kind === 3) return `s${next() % 100}\u0000"\\é`;
      if (kind === 4) return String(next());
      if (kind === 5) return Array.from({ length: next() % 4 }, () => randomValue(depth + 1));
      const text = `{${Array.from({ length: next() % 6 }, () => `${JSON.stringify(keys[next() % keys.length])}:${JSON.stringify(randomValue(depth + 1))}`).join(',')}}`;
      return JSON.parse(text) as unknown;
    };
    for (let round = 0; round < 2000; round++) {
      const value = JSON.parse(JSON.stringify({ data: randomValue(0), [keys[next() % keys.length]!]: randomValue(0) })) as unknown;
      assert.equal(canonicalJson(value), reference(value));
    }
  });
  it('orders keys as the built-in sort does, for few keys (sorted by insertion) and many (built-in)', () => {
    const alphabet = ['a', 'B', '_', '1', '10', '2', 'é', 'Ω', '𝄞', 'aa', 'a_', 'z', 'Z', '-', ' '];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let round = 0; round < 500; round++) {
      const object: Record<string, number> = {};
      const size = round % 25;
      for (let k = 0; k < size; k++) object[alphabet[next() % alphabet.length]! + alphabet[next() % alphabet.length]!] = k;
      const expected = `{${Object.keys(object)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${object[k]}`)
        .join(',')}}`;
      assert.equal(canonicalJson(object), expected, `keys ${Object.keys(object).join(' ')}`);
    }
  });
});

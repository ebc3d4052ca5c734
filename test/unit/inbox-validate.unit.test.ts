import assert from 'node:assert/strict';
import { validateCreditEvent } from '../../inbox/validate-credit-event';

const limits = { maxCreditAmount: 1_000_000 };
const check = (value: unknown, headers?: Record<string, string>) =>
  validateCreditEvent({ value: typeof value === 'string' ? value : JSON.stringify(value), headers }, limits);

describe('validateCreditEvent', () => {
  it('accepts the seed event and keeps amounts as exact decimal strings', () => {
    assert.deepEqual(check({ event_id: 'evt_9f2', type: 'payment_confirmed', account_id: 42, amount: 500 }), {
      ok: true,
      event: { eventId: 'evt_9f2', accountId: '42', amount: '500' },
    });
  });

  it('accepts account ids beyond 2^53 when they travel as strings', () => {
    const r = check({ event_id: 'e', type: 'payment_confirmed', account_id: '9223372036854775807', amount: 1 });
    assert.deepEqual(r, { ok: true, event: { eventId: 'e', accountId: '9223372036854775807', amount: '1' } });
  });

  const bad: [string, unknown, RegExp][] = [
    ['malformed JSON', '{"event_id":', /^malformed JSON: /],
    ['not an object', '"just a string"', /^payload is not a JSON object$/],
    ['missing event id', { type: 'payment_confirmed', account_id: 1, amount: 1 }, /^missing event id$/],
    ['numeric event id', { event_id: 7, type: 'payment_confirmed', account_id: 1, amount: 1 }, /^event id must be a string$/],
    ['missing account', { event_id: 'e', type: 'payment_confirmed', amount: 1 }, /^missing account id$/],
    ['account too big', { event_id: 'e', type: 'payment_confirmed', account_id: '99999999999999999999', amount: 1 }, /^account id must be a positive integer/],
    ['fractional amount', { event_id: 'e', type: 'payment_confirmed', account_id: 1, amount: 0.5 }, /^amount must be a positive safe integer/],
    ['unsafe amount', { event_id: 'e', type: 'payment_confirmed', account_id: 1, amount: 2 ** 60 }, /^amount must be a positive safe integer/],
    ['absurd amount', { event_id: 'e', type: 'payment_confirmed', account_id: 1, amount: 1_000_001 }, /^amount 1000001 exceeds the maximum credit of 1000000$/],
    ['unknown type', { event_id: 'e', type: 'x'.repeat(500), account_id: 1, amount: 1 }, /^unknown event type "x+\.\.\.$/],
  ];
  for (const [name, value, reason] of bad) {
    it(`rejects ${name} with a specific reason`, () => {
      const r = check(value);
      assert.equal(r.ok, false);
      assert.match((r as { reason: string }).reason, reason);
    });
  }

  it('takes the type from the header when the payload has none', () => {
    const r = check({ event_id: 'e', account_id: 1, amount: 1 }, { 'event-type': 'payment_confirmed' });
    assert.equal(r.ok, true);
  });
});

import assert from 'node:assert/strict';
import { defineEventCatalog, enqueue, EnqueueValidationError, EVENT_VERSION_HEADER } from 'temporal-outbox';
import { defineEventHandler } from 'temporal-outbox';
import { OrderPlacedV1, OrderPlacedV2 } from '../fixtures/events/order-placed';

// How a payload is checked at each step: enqueue (refused with the schema's message), the relay's
// catalog (the version the row says), the handler (read as its version, upcast from older ones).
describe('event definitions: checking and reading payloads', () => {
  const handler = defineEventHandler(OrderPlacedV2, { apply: async () => undefined });
  const headers = (version?: string) => ({ header: (name: string) => (name === EVENT_VERSION_HEADER ? version : undefined) });
  const v1 = { event_id: 'e1', type: 'order_placed', order_id: 'o-1', customer: 'Ada King Lovelace', total: 1250 };
  const v2 = { event_id: 'e2', type: 'order_placed', order_id: 'o-2', first_name: 'Alan', last_name: 'Turing', total_minor: 99, currency: 'GBP' };

  it('a v2 handler reads v1 (no header, or header 1) through the upcast, and v2 as it is', () => {
    const expected = { ok: true, data: { order_id: 'o-1', first_name: 'Ada', last_name: 'King Lovelace', total_minor: 1250 } };
    assert.deepEqual(handler.validate(v1, headers()), expected);
    assert.deepEqual(handler.validate(v1, headers('1')), expected);
    assert.deepEqual(handler.validate(v2, headers('2')), { ok: true, data: { order_id: 'o-2', first_name: 'Alan', last_name: 'Turing', total_minor: 99, currency: 'GBP' } });
  });

  it('refuses with the schema message of the version the event says it is, naming the field', () => {
    assert.deepEqual(handler.validate({ ...v1, total: '12' }, headers('1')), { ok: false, reason: 'order_placed v1: total: Invalid input: expected number, received string' });
    assert.deepEqual(handler.validate(v1, headers('2')), {
      ok: false,
      reason: 'order_placed v2: first_name: Invalid input: expected string, received undefined; last_name: Invalid input: expected string, received undefined; total_minor: Invalid input: expected number, received undefined',
    });
    assert.deepEqual(handler.validate(v1, headers('x')), { ok: false, reason: 'event-version header must be a positive integer (got "x")' });
  });

  it('reads a version newer than its own with its own schema (forward), and says so when that fails', () => {
    assert.equal(handler.validate(v2, headers('3')).ok, true);
    assert.deepEqual(handler.validate(v1, headers('3')).ok, false);
    assert.match((handler.validate(v1, headers('3')) as { reason: string }).reason, /^order_placed v3 read as v2: order_placed v2: first_name/);
  });

  it('a v1 handler refuses v2 events (the type is backward, not forward, compatible)', () => {
    const old = defineEventHandler(OrderPlacedV1, { apply: async () => undefined });
    assert.match((old.validate(v2, headers('2')) as { reason: string }).reason, /^order_placed v2 read as v1: order_placed v1: customer: Invalid input/);
  });

  it('the catalog keeps the newest definition and refuses a row only against the version it was written as', () => {
    const catalog = defineEventCatalog([OrderPlacedV1, OrderPlacedV2]);
    assert.equal(catalog.get('order_placed'), OrderPlacedV2);
    assert.equal(catalog.refusal('order_placed', undefined, v1), undefined);
    assert.equal(catalog.refusal('order_placed', '2', v2), undefined);
    assert.equal(catalog.refusal('order_placed', undefined, { ...v1, total: -1 }), 'order_placed v1: total: Too small: expected number to be >0');
    assert.equal(catalog.refusal('order_placed', '9', { anything: true }), undefined, 'a newer version is for a consumer to judge');
    assert.equal(catalog.refusal('other_type', undefined, { anything: true }), undefined);
  });

  it('enqueue refuses a payload the schema refuses, before any SQL', async () => {
    const db = { query: async () => assert.fail('no SQL for a refused payload') };
    await assert.rejects(
      enqueue(db, OrderPlacedV1, { order_id: 'o-1', customer: '', total: 5 }),
      (err: unknown) => err instanceof EnqueueValidationError && err.message === 'order_placed v1: customer: Too small: expected string to have >=1 characters',
    );
  });

  it('enqueue writes type, event id and the version header with the payload as given', async () => {
    const calls: unknown[][] = [];
    const db = { query: async (_text: string, values: unknown[]) => (calls.push(values), { rows: [{ id: '7' }] }) };
    const result = await enqueue(db, OrderPlacedV2, { order_id: 'o-9', first_name: 'Grace', last_name: 'Hopper', total_minor: 10, event_id: 'evt-9' });
    assert.deepEqual(result, { id: 7, eventId: 'evt-9' });
    const [eventType, payload, key, rowHeaders] = calls[0]!;
    assert.equal(eventType, 'order_placed');
    assert.deepEqual(JSON.parse(payload as string), { event_id: 'evt-9', type: 'order_placed', order_id: 'o-9', first_name: 'Grace', last_name: 'Hopper', total_minor: 10 });
    assert.equal(key, 'o-9', 'the key function the type was defined with');
    assert.deepEqual(JSON.parse(rowHeaders as string), { [EVENT_VERSION_HEADER]: '2' });
  });
});

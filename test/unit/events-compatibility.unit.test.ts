import assert from 'node:assert/strict';
import { z } from 'zod';
import { defineEvent, EventCompatibilityError, type CompatibilityMode } from 'temporal-outbox';
import { checkCompatibility } from '../../src/events/compatibility';

// The rules a new version is held to when it is registered (defineEvent(...).evolve(...)).
describe('event versions: compatibility rules', () => {
  const v1 = { order_id: z.string(), total: z.int(), note: z.string().optional() };
  const base = (compatibility: CompatibilityMode, schema: z.ZodObject = z.object(v1)) => defineEvent({ type: 'order_placed', schema, compatibility });
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof EventCompatibilityError, `an EventCompatibilityError, got ${String(err)}`);
      return err.message;
    }
    return undefined;
  };

  describe('backward (a consumer on the new version reads the previous one)', () => {
    it('accepts an added optional field and a removed field', () => {
      assert.equal(refusal(() => base('backward').evolve({ schema: z.object({ ...v1, currency: z.string().optional() }) })), undefined);
      assert.equal(refusal(() => base('backward').evolve({ schema: z.object({ order_id: z.string(), total: z.int() }) })), undefined);
    });
    it('accepts widening integer to number', () => {
      assert.equal(refusal(() => base('backward').evolve({ schema: z.object({ ...v1, total: z.number() }) })), undefined);
    });
    it('refuses an added required field without an upcast, naming the field and the fix', () => {
      assert.equal(
        refusal(() => base('backward').evolve({ schema: z.object({ ...v1, currency: z.string() }) })),
        'event order_placed v2 is not backward compatible with v1: field "currency" is required by the new version but is not in the previous version (register an upcast, or make it optional)',
      );
    });
    it('refuses a rename (new required field) and a narrowed type without an upcast', () => {
      const message = refusal(() => base('backward').evolve({ schema: z.object({ order_id: z.string(), total_minor: z.int() }) }));
      assert.match(message!, /field "total_minor" is required by the new version but is not in the previous version/);
      assert.match(refusal(() => base('backward').evolve({ schema: z.object({ ...v1, total: z.string() }) }))!, /field "total" is integer in the previous version but string in the new version/);
      assert.match(refusal(() => base('backward').evolve({ schema: z.object({ ...v1, note: z.string() }) }))!, /field "note" is required by the new version but is optional in the previous version/);
    });
    it('accepts a rename or a split when an upcast is registered with the version', () => {
      const v2 = z.object({ order_id: z.string(), total_minor: z.int() });
      assert.equal(refusal(() => base('backward').evolve({ schema: v2, upcast: (p) => ({ order_id: String(p.order_id), total_minor: Number(p.total) }) })), undefined);
    });
    it('checks nested objects and enums', () => {
      const nested = (address: z.ZodObject) => z.object({ ...v1, address });
      const withStreet = base('backward', nested(z.object({ street: z.string() })));
      assert.match(refusal(() => withStreet.evolve({ schema: nested(z.object({ street: z.string(), zip: z.string() })) }))!, /field "address.zip" is required by the new version/);
      const status = base('backward', z.object({ ...v1, status: z.enum(['open', 'paid', 'void']) }));
      assert.match(refusal(() => status.evolve({ schema: z.object({ ...v1, status: z.enum(['open', 'paid']) }) }))!, /field "status" allows values "void" in the previous version that the new version does not accept/);
    });
  });

  describe('forward (a consumer still on the previous version reads the new one)', () => {
    it('accepts an added field (open object) and an added optional field', () => {
      assert.equal(refusal(() => base('forward').evolve({ schema: z.object({ ...v1, currency: z.string() }) })), undefined);
    });
    it('refuses removing or renaming a field the previous version requires, even with an upcast', () => {
      const message = refusal(() => base('forward').evolve({ schema: z.object({ order_id: z.string(), total_minor: z.int() }), upcast: (p) => ({ order_id: String(p.order_id), total_minor: Number(p.total) }) }));
      assert.equal(
        message,
        'event order_placed v2 is not forward compatible with v1: field "total" is required by the previous version but is not in the new version (consumers of the previous version would park these events)',
      );
    });
    it('refuses a new field when the previous version is a closed object', () => {
      const closed = base('forward', z.strictObject(v1));
      assert.match(refusal(() => closed.evolve({ schema: z.strictObject({ ...v1, currency: z.string() }) }))!, /field "currency" of the new version is not allowed by the previous version, whose object is closed/);
    });
    it('refuses widening a type', () => {
      assert.match(refusal(() => base('forward').evolve({ schema: z.object({ ...v1, total: z.number() }) }))!, /field "total" is number in the new version but integer in the previous version/);
    });
  });

  it('full refuses what either direction refuses; none accepts any change', () => {
    assert.match(refusal(() => base('full').evolve({ schema: z.object({ ...v1, currency: z.string() }) }))!, /not full compatible.*"currency" is required by the new version/);
    assert.match(refusal(() => base('full').evolve({ schema: z.object({ order_id: z.string() }) }))!, /"total" is required by the previous version but is not in the new version/);
    assert.equal(refusal(() => base('none').evolve({ schema: z.object({ something: z.boolean() }) })), undefined);
  });

  it('refuses a version that does not grow, and a schema that is not an object or has no JSON Schema form', () => {
    assert.match(refusal(() => base('backward').evolve({ version: 1, schema: z.object(v1) }))!, /version 1 must be greater than 1/);
    assert.throws(() => defineEvent({ type: 'x', schema: z.object({ at: z.date() }) }), /event x v1: its schema has no JSON Schema form/);
    assert.throws(() => defineEvent({ type: 'bad type!', schema: z.object(v1) }), /an event type must be/);
  });

  it('checkCompatibility reads plain JSON Schema (types given as lists, anyOf)', () => {
    const previous = { type: 'object', properties: { id: { type: ['string', 'integer'] } }, required: ['id'] };
    const next = { type: 'object', properties: { id: { anyOf: [{ type: 'string' }] } }, required: ['id'] };
    assert.deepEqual(checkCompatibility(previous, next, 'backward', { upcast: false }), [
      'field "id" is string or integer in the previous version but string in the new version (register an upcast, or make it optional)',
    ]);
    assert.deepEqual(checkCompatibility(previous, next, 'forward', { upcast: false }), []);
  });
});

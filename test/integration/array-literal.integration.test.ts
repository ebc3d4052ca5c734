import assert from 'node:assert/strict';
import { integerArrayLiteral, textArrayLiteral } from '../../src/db/array-literal';
import { createTestDatabase, type TestDatabase } from '../kit/database';

// The array literals the hot queries send instead of JS arrays (src/db/array-literal.ts) must mean
// to PostgreSQL exactly what the arrays meant: every value reads back unchanged, and what the
// fast path cannot say safely goes through pg's own path.
describe('array literals read back by PostgreSQL as the arrays they came from', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  const readBack = async (value: unknown, type: string) => (await db.pool.query(`SELECT $1::${type} AS v`, [value])).rows[0].v as unknown[];

  it('text: quotes, backslashes, commas, braces, spaces, "NULL", empty, non-ASCII, NULL', async () => {
    const values = ['plain', 'with "quotes"', 'back\\slash', 'not\\na newline', 'two\\\\\\"', 'a\\"b', 'a,b', '{x}', '  spaced  ', 'NULL', 'null', '', 'évènement ✓ 𝄞', null, 'evt_123'];
    const literal = textArrayLiteral(values);
    assert.equal(typeof literal, 'string', 'took the one-pass path');
    assert.deepEqual(await readBack(literal, 'text[]'), values);
  });

  it('text with characters JSON escapes its own way (newline, tab, NUL-free control characters) goes through pg unchanged', async () => {
    const values = ['line\nbreak', 'tab\there', 'bell\u0007', 'ok'];
    const literal = textArrayLiteral(values);
    assert.equal(literal, values, 'handed back to pg');
    assert.deepEqual(await readBack(literal, 'text[]'), values);
    // Not text PostgreSQL can hold either way (pg's path sends U+FFFD), but never a misread escape.
    const loneSurrogate = ['lone \uD800 surrogate'];
    assert.equal(textArrayLiteral(loneSurrogate), loneSurrogate);
  });

  it('integers: numbers and bigint strings, negatives, beyond 2^53 as text; anything else goes through pg', async () => {
    const values = [0, 1, -7, '9007199254740993', '-9223372036854775808', '42'];
    const literal = integerArrayLiteral(values);
    assert.equal(literal, '{0,1,-7,9007199254740993,-9223372036854775808,42}');
    assert.deepEqual(await readBack(literal, 'bigint[]'), ['0', '1', '-7', '9007199254740993', '-9223372036854775808', '42']);
    for (const odd of [[1.5], ['1e3'], [' 1'], [Number.MAX_SAFE_INTEGER + 2]] as (string | number)[][]) assert.equal(integerArrayLiteral(odd), odd, `${JSON.stringify(odd)} handed back to pg`);
  });

  it('empty arrays', async () => {
    assert.deepEqual(await readBack(textArrayLiteral([]), 'text[]'), []);
    assert.deepEqual(await readBack(integerArrayLiteral([]), 'bigint[]'), []);
  });
});

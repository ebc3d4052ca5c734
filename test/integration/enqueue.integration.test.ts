import assert from 'node:assert/strict';
import { enqueue, EnqueueValidationError } from '../../src/outbox/enqueue';
import { inTransaction } from '../../src/db/pool';
import { createTestDatabase, type TestDatabase } from '../kit/database';

describe('enqueue: an outbox row inside the caller’s transaction', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());
  beforeEach(async () => db.pool.query('TRUNCATE temporal_outbox.outbox_events'));

  it('commits with the caller’s transaction and generates an event id when absent', async () => {
    const result = await inTransaction(db.pool, (client) => enqueue(client, { eventType: 'payment_confirmed', payload: { type: 'payment_confirmed', account_id: 9, amount: 100 } }));
    assert.match(result.eventId, /^[0-9a-f-]{36}$/);
    const { rows } = await db.pool.query(`SELECT id, event_type, payload, event_key, published_at FROM temporal_outbox.outbox_events`);
    assert.equal(rows.length, 1);
    assert.equal(Number(rows[0].id), result.id);
    assert.deepEqual(rows[0].payload, { event_id: result.eventId, type: 'payment_confirmed', account_id: 9, amount: 100 });
    assert.equal(rows[0].published_at, null);
  });

  it('leaves nothing behind when the caller rolls back', async () => {
    await assert.rejects(
      inTransaction(db.pool, async (client) => {
        await enqueue(client, { eventType: 'x', payload: { event_id: 'e-1' } });
        throw new Error('business rule failed after the enqueue');
      }),
      /business rule failed/,
    );
    assert.equal((await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events`)).rowCount, 0);
  });

  it('keeps a caller-supplied event id, key and headers', async () => {
    await enqueue(db.pool, { eventType: 'x', payload: { event_id: 'mine' }, key: 'acct-1', headers: { traceparent: 'abc' } });
    const { rows } = await db.pool.query(`SELECT payload, event_key, headers FROM temporal_outbox.outbox_events`);
    assert.deepEqual(rows[0], { payload: { event_id: 'mine' }, event_key: 'acct-1', headers: { traceparent: 'abc' } });
  });

  it('rejects bad input with a specific message and writes nothing', async () => {
    const bad: [unknown, RegExp][] = [
      [{ eventType: '', payload: {} }, /eventType must be a non-empty string/],
      [{ eventType: 'x', payload: [1] }, /payload must be a JSON object/],
      [{ eventType: 'x', payload: { event_id: 7 } }, /event_id must be a non-empty string/],
      [{ eventType: 'x', payload: {}, headers: { a: 1 } }, /header a must be a string/],
    ];
    for (const [input, message] of bad) {
      await assert.rejects(enqueue(db.pool, input as never), (err: Error) => err instanceof EnqueueValidationError && message.test(err.message));
    }
    assert.equal((await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events`)).rowCount, 0);
  });

  it('makes a second transaction on the same key wait, so id order is commit order for that key', async () => {
    const first = await db.pool.connect();
    const second = await db.pool.connect();
    try {
      await first.query('BEGIN');
      await second.query('BEGIN');
      const a = await enqueue(first, { eventType: 'x', payload: {}, key: 'same' });
      let secondDone = false;
      const pending = enqueue(second, { eventType: 'x', payload: {}, key: 'same' }).then((r) => ((secondDone = true), r));
      // A different key is not held up.
      await enqueue(db.pool, { eventType: 'x', payload: {}, key: 'other' });
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(secondDone, false, 'the same-key enqueue waits for the first transaction');
      await first.query('COMMIT');
      const b = await pending;
      await second.query('COMMIT');
      assert.ok(b.id > a.id);
    } finally {
      first.release();
      second.release();
    }
  });
});

import assert from 'node:assert/strict';
import { inTransaction } from '../../src/db/pool';
import { confirmPayment } from '../../examples/payments/confirm-payment';
import { createPayment } from '../../examples/payments/create-payment';
import { PaymentValidationError } from '../../examples/payments/validate';
import { createTestDatabase, type TestDatabase } from '../kit/database';

describe('payments: confirm and enqueue payment_confirmed atomically', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  const events = async () => (await db.pool.query(`SELECT event_type, payload, event_key FROM temporal_outbox.outbox_events ORDER BY id`)).rows;

  it('confirms once and enqueues the seed’s payload shape with the account as key', async () => {
    await createPayment(db.pool, { paymentId: 'pay-1', accountId: 42, amount: 1250 });
    const result = await inTransaction(db.pool, (c) => confirmPayment(c, { paymentId: 'pay-1' }));
    assert.equal(result.confirmed, true);
    const rows = await events();
    assert.equal(rows.length, 1);
    assert.equal(rows[0].event_type, 'payment_confirmed');
    assert.equal(rows[0].event_key, '42');
    assert.deepEqual(rows[0].payload, { event_id: result.confirmed ? result.eventId : '', type: 'payment_confirmed', account_id: 42, amount: 1250 });
    const { rows: p } = await db.pool.query(`SELECT status FROM payments WHERE payment_id = 'pay-1'`);
    assert.equal(p[0].status, 'confirmed');

    assert.deepEqual(await inTransaction(db.pool, (c) => confirmPayment(c, { paymentId: 'pay-1' })), { confirmed: false, reason: 'already_confirmed' });
    assert.deepEqual(await confirmPayment(db.pool, { paymentId: 'nope' }), { confirmed: false, reason: 'not_found' });
    assert.equal((await events()).length, 1, 'no second event');
  });

  it('leaves neither the status change nor the event when the transaction rolls back', async () => {
    await createPayment(db.pool, { paymentId: 'pay-2', accountId: 7, amount: 300 });
    const before = (await events()).length;
    await assert.rejects(
      inTransaction(db.pool, async (c) => {
        await confirmPayment(c, { paymentId: 'pay-2' });
        throw new Error('crash before commit');
      }),
      /crash before commit/,
    );
    assert.equal((await events()).length, before);
    const { rows } = await db.pool.query(`SELECT status FROM payments WHERE payment_id = 'pay-2'`);
    assert.equal(rows[0].status, 'pending');
  });

  it('refuses non-integer, negative and absurd amounts', async () => {
    for (const amount of [1.5, -3, 0, Number.MAX_SAFE_INTEGER + 2, '10' as unknown as number]) {
      await assert.rejects(createPayment(db.pool, { paymentId: `bad-${amount}`, accountId: 1, amount }), PaymentValidationError);
    }
    assert.equal((await createPayment(db.pool, { paymentId: 'pay-3', accountId: 1, amount: 5 })).created, true);
    assert.equal((await createPayment(db.pool, { paymentId: 'pay-3', accountId: 1, amount: 5 })).created, false);
  });
});

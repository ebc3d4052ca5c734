import assert from 'node:assert/strict';
import { applyEvents } from '../../src/inbox/apply-events';
import { HandlerRegistry } from '../../src/inbox/handler';
import { paymentConfirmedHandler } from '../../examples/payments/credit-handler';
import type { EventBatch } from '../../workflows/inbox/contract';
import { createTestDatabase, type TestDatabase } from '../kit/database';

// The payment credit handler writes payments_credit_ledger (what the reconciliation audit sums)
// in the inbox transaction: a ledger row exactly for each credit that moved a balance, on the
// set-based path and on the one-event path; the event's Kafka position is on its inbox row.
describe('payment credit handler: the credit ledger', () => {
  let db: TestDatabase;
  const handlers = new HandlerRegistry([paymentConfirmedHandler({ maxCreditAmount: 1_000_000 })]);
  const credits = (events: { id: string; account: string; amount: string; partition: number; offset: string }[]): EventBatch => ({
    consumer: 'payments-credit',
    topics: ['ledger.events'],
    eventIds: events.map((e) => e.id),
    eventTypes: events.map(() => 'payment_confirmed'),
    topicIndex: events.map(() => 0),
    partitions: events.map((e) => e.partition),
    offsets: events.map((e) => e.offset),
    data: events.map((e) => ({ account_id: e.account, amount: Number(e.amount) })),
    payloadHashes: events.map((e) => `h-${e.id}`),
  });
  const ledger = async () =>
    (await db.pool.query(`SELECT event_id, account_id::text, amount::text FROM payments_credit_ledger ORDER BY event_id`)).rows;
  const inboxPositions = async () =>
    (await db.pool.query(`SELECT event_id, kafka_topic, kafka_partition, kafka_offset::text FROM temporal_outbox.inbox_processed_events ORDER BY event_id`)).rows;
  const drift = async () =>
    (await db.pool.query(`SELECT a.account_id::text FROM accounts a LEFT JOIN (SELECT account_id, sum(amount) AS s FROM payments_credit_ledger GROUP BY account_id) l USING (account_id)
                           WHERE a.balance <> a.opening_balance + coalesce(l.s, 0)`)).rows;

  before(async () => {
    db = await createTestDatabase();
    await db.pool.query(`INSERT INTO accounts (account_id, balance) VALUES (1, 0), (2, 50), (3, 9223372036854775800)`);
  });
  after(async () => db?.drop());

  it('set-based path: one row per applied credit, its Kafka position on the inbox row; none for a rejected or redelivered event', async () => {
    assert.deepEqual(await ledger(), []);
    const batch = credits([
      { id: 'a', account: '1', amount: '10', partition: 0, offset: '5' },
      { id: 'b', account: '2', amount: '20', partition: 1, offset: '6' },
      { id: 'c', account: '99', amount: '30', partition: 1, offset: '7' },
    ]);
    assert.deepEqual(await applyEvents(db.pool, handlers, batch), { applied: 2, appliedByType: { payment_confirmed: 2 }, duplicates: 0, rejected: 1, conflicts: 0 });
    const expected = [
      { event_id: 'a', account_id: '1', amount: '10' },
      { event_id: 'b', account_id: '2', amount: '20' },
    ];
    assert.deepEqual(await ledger(), expected);
    assert.deepEqual(await inboxPositions(), [
      { event_id: 'a', kafka_topic: 'ledger.events', kafka_partition: 0, kafka_offset: '5' },
      { event_id: 'b', kafka_topic: 'ledger.events', kafka_partition: 1, kafka_offset: '6' },
    ], 'the rejected event leaves no inbox row');
    assert.deepEqual(await applyEvents(db.pool, handlers, batch), { applied: 0, appliedByType: {}, duplicates: 2, rejected: 1, conflicts: 0 });
    assert.deepEqual(await ledger(), expected, 'a redelivery adds no ledger row');
    assert.deepEqual(await drift(), [], 'balance = opening balance + ledgered credits');
  });

  it('one-event path (after the set-based statement fails on a bad event): the good credit is ledgered, the bad one not', async () => {
    // Account 3's balance overflows bigint with this credit: the set-based UPDATE fails with a
    // data error (22003) and the library applies the batch one event at a time.
    const batch = credits([
      { id: 'd', account: '1', amount: '5', partition: 2, offset: '40' },
      { id: 'e', account: '3', amount: '100', partition: 2, offset: '41' },
    ]);
    assert.deepEqual(await applyEvents(db.pool, handlers, batch), { applied: 1, appliedByType: { payment_confirmed: 1 }, duplicates: 0, rejected: 1, conflicts: 0 });
    const rows = await ledger();
    assert.deepEqual(rows.find((r) => r.event_id === 'd'), { event_id: 'd', account_id: '1', amount: '5' });
    assert.equal(rows.find((r) => r.event_id === 'e'), undefined);
    assert.deepEqual(await drift(), []);
  });
});

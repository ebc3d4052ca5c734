import assert from 'node:assert/strict';
import { applyEvents } from '../../src/inbox/apply-events';
import { HandlerRegistry } from '../../src/inbox/handler';
import { paymentConfirmedHandler } from '../../examples/payments/credit-handler';
import { pruneProcessedEvents } from '../../src/inbox/prune-processed-events';
import { spawnConsumer } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';

describe('inbox retention horizon', () => {
  it('a consumer worker refuses to start when the horizon does not exceed topic retention + maximum lag', async () => {
    const consumer = spawnConsumer({
      KAFKA_TOPIC_RETENTION_MS: String(7 * 24 * 3600_000),
      CONSUMER_MAX_LAG_MS: String(24 * 3600_000),
      INBOX_RETENTION_MS: String(3 * 24 * 3600_000),
    });
    const { code } = await consumer.exited;
    assert.equal(code, 1);
    const stderr = consumer.stderr.join('');
    assert.match(stderr, /consumer worker refused to start/);
    assert.match(stderr, /\(INBOX_RETENTION_MS\): 259200000 ms must exceed .*\(KAFKA_TOPIC_RETENTION_MS \+ CONSUMER_MAX_LAG_MS, 691200000 ms\)/);
  });

  describe('pruning processed ids', () => {
    let db: TestDatabase;
    before(async () => {
      db = await createTestDatabase();
    });
    after(async () => db?.drop());

    it('deletes only ids older than the horizon, in bounded batches, and a redelivery of a kept id is still a duplicate', async () => {
      // 2,500 ids processed 30 days ago, 500 processed 1 hour ago.
      await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id, processed_at)
        SELECT 'payments-credit', 'old-' || g, now() - interval '30 days' + g * interval '1 second' FROM generate_series(1, 2500) g`);
      await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id, processed_at)
        SELECT 'payments-credit', 'new-' || g, now() - interval '1 hour' FROM generate_series(1, 500) g`);

      const result = await pruneProcessedEvents(db.pool, { horizonMs: 14 * 24 * 3600_000, batchSize: 1000, timeBudgetMs: 60_000 });
      assert.equal(result.deleted, 2500);
      assert.equal(result.batches, 3, '1000 + 1000 + 500');
      assert.equal(result.complete, true);
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n, bool_and(event_id LIKE 'new-%') AS only_new FROM temporal_outbox.inbox_processed_events`);
      assert.deepEqual(rows[0], { n: 500, only_new: true });

      await db.pool.query('INSERT INTO accounts (account_id) VALUES (1)');
      const handlers = new HandlerRegistry([paymentConfirmedHandler({ maxCreditAmount: 1_000_000 })]);
      const redelivered = await applyEvents(db.pool, handlers, {
        consumer: 'payments-credit', topics: ['t'], eventIds: ['new-1', 'old-1'], eventTypes: ['payment_confirmed', 'payment_confirmed'], topicIndex: [0, 0],
        partitions: [0, 0], offsets: ['0', '1'], data: [{ account_id: '1', amount: 10 }, { account_id: '1', amount: 20 }], payloadHashes: ['h-new-1', 'h-old-1'],
      });
      // The kept row has no payload hash (written before hashes existed): a plain duplicate.
      assert.deepEqual(redelivered, { applied: 1, appliedByType: { payment_confirmed: 1 }, duplicates: 1, rejected: 0, conflicts: 0 }, 'a kept id still dedupes; a pruned one is new again (why the horizon must outlive redelivery)');

      const again = await pruneProcessedEvents(db.pool, { horizonMs: 14 * 24 * 3600_000, batchSize: 1000, timeBudgetMs: 60_000 });
      assert.equal(again.deleted, 0);
    });

    it('stops at its time budget and reports it is not complete', async () => {
      await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id, processed_at)
        SELECT 'payments-credit', 'older-' || g, now() - interval '40 days' FROM generate_series(1, 300) g`);
      const result = await pruneProcessedEvents(db.pool, { horizonMs: 14 * 24 * 3600_000, batchSize: 100, timeBudgetMs: 1 });
      assert.equal(result.complete, false);
      assert.ok(result.deleted >= 100 && result.deleted < 300);
    });
  });
});

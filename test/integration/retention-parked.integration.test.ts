import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/env';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { runRetentionOnce } from '../kit/retention-run';

const DAY = 86_400_000;

// Parked rows are evidence kept for PARKED_RETENTION_MS, then the retention run deletes them:
// inbox parked events and outbox rows parked unpublished, only those parked before the horizon.
// Pending rows (however old) and younger parked rows stay.
describe('retention: parked rows are pruned after the parked-rows horizon', function () {
  this.timeout(120_000);
  const config = loadConfig();
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  async function parkedInbox(ageDays: number, offset: number) {
    await db.pool.query(
      `INSERT INTO temporal_outbox.inbox_parked_events (consumer, topic, kafka_partition, kafka_offset, event_id, reason, parked_at)
       VALUES ('payments-credit', 't', 0, $1, $2, 'unknown account', now() - make_interval(days => $3))`,
      [offset, `inbox-${ageDays}d-${offset}`, ageDays],
    );
  }
  async function outboxRow(name: string, ageDays: number, state: 'parked' | 'pending' | 'published') {
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload, created_at, published_at, parked_at, attempts, last_error)
       VALUES ('payment_confirmed', jsonb_build_object('event_id', $1::text, 'type', 'payment_confirmed', 'account_id', 1, 'amount', 1),
               now() - make_interval(days => $2), CASE WHEN $3 = 'published' THEN now() - make_interval(days => $2) END,
               CASE WHEN $3 = 'parked' THEN now() - make_interval(days => $2) END, 5, CASE WHEN $3 = 'parked' THEN 'too large' END)`,
      [name, ageDays, state],
    );
  }
  const inboxLeft = async () => (await db.pool.query(`SELECT event_id FROM temporal_outbox.inbox_parked_events ORDER BY event_id`)).rows.map((r) => r.event_id as string);
  const outboxLeft = async () => (await db.pool.query(`SELECT payload->>'event_id' AS name FROM temporal_outbox.outbox_events ORDER BY id`)).rows.map((r) => r.name as string);

  it('deletes inbox and outbox parked rows older than the horizon, and nothing else', async () => {
    await parkedInbox(40, 1);
    await parkedInbox(31, 2);
    await parkedInbox(29, 3);
    await parkedInbox(1, 4);
    await outboxRow('parked-40d', 40, 'parked');
    await outboxRow('parked-29d', 29, 'parked');
    await outboxRow('pending-40d', 40, 'pending');
    await outboxRow('published-1h', 0, 'published');
    assert.deepEqual(await inboxLeft(), ['inbox-1d-4', 'inbox-29d-3', 'inbox-31d-2', 'inbox-40d-1'], 'all four parked inbox rows exist before the run');
    assert.equal((await outboxLeft()).length, 4);

    const report = await runRetentionOnce(config, db.pool, { windowMs: DAY, batchSize: 1, timeBudgetMs: 60_000, inboxHorizonMs: 15 * DAY, parkedHorizonMs: 30 * DAY }, 'retention-parked');
    assert.deepEqual(await inboxLeft(), ['inbox-1d-4', 'inbox-29d-3'], 'only inbox rows parked more than 30 days ago are gone');
    assert.deepEqual(await outboxLeft(), ['parked-29d', 'pending-40d', 'published-1h'], 'the old parked outbox row is gone; pending and younger rows stay');
    // batchSize 1: the loop went batch by batch until no old row was left.
    assert.deepEqual(report.parked && { inbox: report.parked.inboxDeleted, outbox: report.parked.outboxDeleted, complete: report.parked.complete }, { inbox: 2, outbox: 1, complete: true });
  });
});

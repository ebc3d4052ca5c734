import assert from 'node:assert/strict';
import { readPendingRows } from '../../src/outbox/queries/read-pending-rows';
import { createTestDatabase, type TestDatabase } from '../kit/database';

// The relay reads created_at as text PostgreSQL renders in the created-at header's format, instead
// of parsing a Date per row and printing it again. The header must not change: the same text
// JavaScript's Date#toISOString gives for the timestamp as pg parses it, microseconds truncated
// to milliseconds, whatever the session's time zone.
describe('pending rows: created_at rendered by PostgreSQL as Date#toISOString would', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  it('agrees with Date#toISOString for every row, edge microseconds included, in a non-UTC session', async () => {
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload, created_at)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'e-' || g, 'type', 'payment_confirmed'), t
         FROM unnest($1::timestamptz[]) WITH ORDINALITY AS x(t, g)`,
      [['2026-12-31 23:59:59.999999+00', '2026-01-01 00:00:00.000999+00', '2026-01-01 00:00:00.0005+00', '2024-02-29 12:00:00.123456+05:30', '2026-06-30 23:59:59.999+00']],
    );
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload, created_at)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'r-' || g, 'type', 'payment_confirmed'), clock_timestamp() - random() * interval '400 days'
         FROM generate_series(1, 2000) g`,
    );
    const client = await db.pool.connect();
    try {
      await client.query(`SET TIME ZONE 'America/New_York'`);
      const { rows: stored } = await client.query<{ id: string; created_at: Date }>(`SELECT id, created_at FROM temporal_outbox.outbox_events ORDER BY id`);
      const rendered = await readPendingRows(client, stored.map((r) => Number(r.id)));
      assert.equal(rendered.length, stored.length);
      const differing = rendered.filter((row, i) => row.createdAt !== stored[i]!.created_at.toISOString());
      assert.deepEqual(differing.map((r) => `${r.id}: ${r.createdAt}`), []);
      assert.equal(rendered[0]!.createdAt, '2026-12-31T23:59:59.999Z', 'truncated, not rounded into the next year');
    } finally {
      client.release();
    }
  });
});

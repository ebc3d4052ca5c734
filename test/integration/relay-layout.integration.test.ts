import assert from 'node:assert/strict';
import { Client } from 'pg';
import { ensureLayout, readLayout } from '../../src/outbox/queries/relay-layout';
import { createTestDatabase, type TestDatabase } from '../kit/database';

// Two relay shards starting at once on a fresh database both try to record the layout. The
// loser's INSERT waits for the winner's commit, then does nothing; its statement's snapshot is
// older than that commit, so it must look again rather than come back empty-handed.
describe('relay layout recorded by two shards at once on a fresh database', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  const clients: Client[] = [];

  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    await db?.drop();
  });

  it('gives both the recorded shard count, the second one after waiting for the first', async () => {
    const [first, second] = [new Client({ connectionString: db.url }), new Client({ connectionString: db.url })];
    clients.push(first, second);
    await Promise.all([first.connect(), second.connect()]);
    assert.equal(await readLayout(db.pool), undefined, 'fresh database: no layout yet');

    // The first relay's INSERT is in, not yet committed (held open here, so the overlap is certain).
    await first.query('BEGIN');
    assert.equal(await ensureLayout(first, 8), 8);
    const secondResult = ensureLayout(second, 8);
    // The second one is now blocked on the first one's row.
    await new Promise((r) => setTimeout(r, 300));
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    assert.equal(rows[0].n, 1, 'the second INSERT waits for the first one');
    await first.query('COMMIT');
    assert.equal(await secondResult, 8);
    assert.equal(await readLayout(db.pool), 8);
  });
});

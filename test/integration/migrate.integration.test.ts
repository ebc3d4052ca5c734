import assert from 'node:assert/strict';
import { migrate, readMigrations } from '../../src/db/migrate';
import { createTestDatabase, type TestDatabase } from '../kit/database';

describe('migration runner', () => {
  let db: TestDatabase;
  beforeEach(async () => {
    db = await createTestDatabase({ migrated: false });
  });
  afterEach(async () => db?.drop());

  it('applies every migration exactly once when five runners race', async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(db.url)));
    const expected = readMigrations().map((m) => m.version);
    assert.deepEqual(results.flat().map((m) => m.version).sort((a, b) => a - b), expected, 'each migration applied by exactly one runner');
    const { rows } = await db.pool.query('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(rows.map((r) => r.version), expected);
    const { rows: tables } = await db.pool.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public' AND tablename IN ('outbox_events', 'inbox_processed_events', 'accounts')`);
    assert.equal(tables[0].n, 3);
  });

  it('is a no-op the second time', async () => {
    await migrate(db.url);
    assert.deepEqual(await migrate(db.url), []);
  });

  it('creates the partial index the relay poll depends on', async () => {
    await migrate(db.url);
    const { rows } = await db.pool.query(`SELECT indexdef FROM pg_indexes WHERE indexname = 'outbox_events_pending_idx'`);
    assert.match(rows[0].indexdef, /WHERE \(\(published_at IS NULL\) AND \(parked_at IS NULL\)\)/);
  });
});

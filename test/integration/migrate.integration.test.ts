import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { migrate, readMigrations } from '../../src/db/migrate';
import { createTestDatabase, migrateWithExample, type TestDatabase } from '../kit/database';

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
    const { rows } = await db.pool.query('SELECT version FROM temporal_outbox.migrations ORDER BY version');
    assert.deepEqual(rows.map((r) => r.version), expected);
  });

  it('creates only the library\'s objects, all in its own schema, and nothing in public', async () => {
    await migrate(db.url);
    const { rows: tables } = await db.pool.query<{ name: string }>(
      `SELECT schemaname || '.' || tablename AS name FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    );
    assert.deepEqual(tables.map((t) => t.name), [
      'temporal_outbox.inbox_parked_events',
      'temporal_outbox.inbox_processed_events',
      'temporal_outbox.inbox_skipped_event_types',
      'temporal_outbox.migrations',
      'temporal_outbox.outbox_events',
      'temporal_outbox.outbox_relay_layout',
      'temporal_outbox.outbox_relay_workers',
    ]);
    const { rows: functions } = await db.pool.query<{ name: string }>(
      `SELECT n.nspname || '.' || p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') ORDER BY 1`,
    );
    assert.deepEqual(functions.map((f) => f.name), [
      'temporal_outbox.outbox_events_key',
      'temporal_outbox.outbox_events_notify',
      'temporal_outbox.outbox_events_payload_bytes',
      'temporal_outbox.outbox_key_field',
    ]);
  });

  it('migrates beside a service\'s own accounts, payments, shipments and Rails-style schema_migrations, touching none', async () => {
    await db.pool.query(`
      CREATE TABLE accounts (id serial PRIMARY KEY, owner text);
      CREATE TABLE payments (id serial PRIMARY KEY, cents int);
      CREATE TABLE shipments (id serial PRIMARY KEY);
      CREATE TABLE schema_migrations (version varchar PRIMARY KEY);
      INSERT INTO accounts (owner) VALUES ('ada'); INSERT INTO payments (cents) VALUES (5);
      INSERT INTO schema_migrations VALUES ('20240101000000')`);
    const checksum = async () =>
      (await db.pool.query(`SELECT (SELECT json_agg(a) FROM accounts a)::text || (SELECT json_agg(p) FROM payments p)::text || (SELECT json_agg(s) FROM schema_migrations s)::text AS sum`)).rows[0].sum;
    const before = await checksum();
    assert.equal((await migrate(db.url)).length, readMigrations().length);
    assert.equal(await checksum(), before);
  });

  it('migrates into a configured schema, and the example into its own ledger beside it', async () => {
    await migrate(db.url, { schema: 'acme_outbox', keyField: 'account_id' });
    const { rows: schemas } = await db.pool.query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE '%outbox%' ORDER BY 1`);
    assert.deepEqual(schemas.map((r) => r.nspname), ['acme_outbox'], 'nothing of the library outside the configured schema');
    const { rows: usage } = await db.pool.query(`SELECT has_schema_privilege('outbox_consumer', 'acme_outbox', 'USAGE') AS ok`);
    assert.equal(usage[0].ok, true, 'the component roles reach the configured schema');
    await migrateWithExample(db.url).catch((err: Error) => assert.fail(err));
    const { rows } = await db.pool.query<{ schema: string; n: number }>(
      `SELECT schemaname AS schema, count(*)::int AS n FROM pg_tables WHERE tablename IN ('outbox_events', 'migrations') GROUP BY 1 ORDER BY 1`,
    );
    assert.deepEqual(rows, [{ schema: 'acme_outbox', n: 2 }, { schema: 'temporal_outbox', n: 2 }]);
    const { rows: ledgers } = await db.pool.query(`SELECT count(*)::int AS n FROM public.example_payments_migrations`);
    const exampleMigrations = fs.readdirSync(path.join(PROJECT_ROOT, 'examples', 'payments', 'migrations')).filter((f) => f.endsWith('.sql'));
    assert.equal(ledgers[0].n, exampleMigrations.length, 'each of the example\'s migrations recorded once, in its own ledger');
  });

  it('refuses a schema name that is not a plain identifier before touching the database', async () => {
    await assert.rejects(migrate(db.url, { schema: 'acme; DROP TABLE x' }), /lower-case SQL identifier/);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('public', 'information_schema')`);
    assert.equal(rows[0].n, 0);
  });

  it('is a no-op the second time', async () => {
    await migrate(db.url);
    assert.deepEqual(await migrate(db.url), []);
  });

  it('creates the partial index the relay poll depends on', async () => {
    await migrate(db.url);
    const { rows } = await db.pool.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'temporal_outbox' AND indexname = 'outbox_events_pending_idx'`);
    assert.match(rows[0].indexdef, /WHERE \(\(published_at IS NULL\) AND \(parked_at IS NULL\)\)/);
  });
});

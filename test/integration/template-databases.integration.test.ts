import assert from 'node:assert/strict';
import { Client } from 'pg';
import { createTestDatabase, migrateWithExample, type TestDatabase } from '../kit/database';
import { templateDatabasesEnabled } from '../kit/database-templates';

/**
 * What a database holds that the library's and the example's migrations make, as text: every
 * relation with its columns and privileges, function, trigger, index and schema privilege in the
 * non-system schemas, and the ledgers' versions. Database-level settings are not copied by
 * CREATE DATABASE … TEMPLATE, so they are compared too.
 */
async function fingerprint(url: string): Promise<string> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query<{ line: string }>(
      `WITH s AS (SELECT oid, nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema')
       SELECT line FROM (
         SELECT 'schema ' || s.nspname || ' ' || coalesce(n.nspacl::text, '') AS line FROM pg_namespace n JOIN s USING (oid)
         UNION ALL SELECT 'relation ' || s.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.relacl::text, '') FROM pg_class c JOIN s ON s.oid = c.relnamespace
         UNION ALL SELECT 'column ' || s.nspname || '.' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
           FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN s ON s.oid = c.relnamespace LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attnum > 0 AND NOT a.attisdropped
         UNION ALL SELECT 'function ' || s.nspname || '.' || p.proname || ' ' || md5(pg_get_functiondef(p.oid)) || ' ' || coalesce(p.proacl::text, '') FROM pg_proc p JOIN s ON s.oid = p.pronamespace WHERE p.prokind <> 'a'
         UNION ALL SELECT 'trigger ' || t.tgname || ' ' || pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT t.tgisinternal
         UNION ALL SELECT 'index ' || pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN s ON s.oid = c.relnamespace
         UNION ALL SELECT 'setting ' || array_to_string(setconfig, ',') FROM pg_db_role_setting WHERE setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
         UNION ALL SELECT 'ledger ' || string_agg(version::text, ',' ORDER BY version) FROM temporal_outbox.migrations
       ) x ORDER BY line`,
    );
    return rows.map((r) => r.line).join('\n');
  } finally {
    await c.end();
  }
}

// A test run's migrated databases are copies of a template (test/kit/database-templates.ts): the
// copy must hold exactly what migrating the database itself makes, or every other test would run
// on a layout no service has.
describe('test databases copied from a migrated template', function () {
  this.timeout(120_000);
  let copied: TestDatabase;
  let migrated: TestDatabase;

  before(async () => {
    copied = await createTestDatabase();
    migrated = await createTestDatabase({ migrated: false });
    await migrateWithExample(migrated.url);
  });
  after(async () => {
    await copied?.drop();
    await migrated?.drop();
  });

  it('hold the same schemas, tables, columns, functions, triggers, indexes, privileges and ledger as a database migrated in place', async () => {
    assert.ok(templateDatabasesEnabled(), 'the mocha run copies its databases from a template (.mocharc.cjs)');
    const [fromTemplate, inPlace] = await Promise.all([fingerprint(copied.url), fingerprint(migrated.url)]);
    assert.ok(inPlace.split('\n').length > 100, 'the fingerprint covers the migrated layout');
    assert.equal(fromTemplate, inPlace);
  });
});

import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { PROJECT_ROOT } from '../config/env';
import { DEFAULT_LINK_BOUNDS } from './pool';
import { recordKeyField } from './key-field';
import { DEFAULT_SCHEMA, inSchema, validateSchemaName } from './schema';
import { findLegacyLayout, LEGACY_KEY_FIELD, upgradeFromPublic } from './upgrade-from-public';

export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations');
const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
// Any constant works; it only has to be the same for every runner of this project.
const MIGRATION_LOCK_KEY = 7_320_114;

import type { Migration } from './migration';

export type { Migration };

export interface MigrateOptions {
  /** The library's schema (default temporal_outbox); its migrations are rewritten into it. */
  schema?: string;
  /**
   * Another set of migrations (a service's own, as the example's): their folder and the ledger
   * recording them (`{ schema, table }`). Without them: the library's migrations, ledger `<schema>.migrations`.
   */
  dir?: string;
  ledger?: { schema: string; table: string };
  /**
   * The payload field a row inserted without a key takes its key from (migrations/0053), recorded
   * with the relay layout; unset leaves what is recorded. Library migrations only.
   */
  keyField?: string;
  /**
   * A database laid out by the previous release (the library's tables in public, its ledger
   * public.schema_migrations) is moved into the schema first (docs/upgrading.md). Without this
   * such a database is refused with a message naming the command.
   */
  upgradeFromPublic?: boolean;
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const migrations = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .map((file) => {
      const match = MIGRATION_FILE.exec(file);
      if (!match) throw new Error(`migration file name ${file} must look like 0001_some_name.sql`);
      return { version: Number(match[1]), name: match[2]!, sql: fs.readFileSync(path.join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (i > 0 && m.version === migrations[i - 1]!.version) throw new Error(`two migrations share the number ${m.version}`);
  });
  return migrations;
}

/**
 * Applies the migrations the database lacks. Each one runs in its own transaction together with
 * its ledger row, under a session advisory lock: two runners racing serialise, and the second
 * finds the work done. Safe to run any number of times. (`dir` as a string: that folder, for
 * callers of the earlier signature.)
 */
export async function migrate(databaseUrl: string, options: MigrateOptions | string = {}): Promise<Migration[]> {
  const opts: MigrateOptions = typeof options === 'string' ? { dir: options } : options;
  const schema = validateSchemaName(opts.schema ?? DEFAULT_SCHEMA);
  const library = opts.dir === undefined || path.resolve(opts.dir) === MIGRATIONS_DIR;
  if (!library && opts.ledger === undefined) throw new Error('migrate: a folder of migrations other than the library\'s needs a ledger of its own');
  const ledger = opts.ledger ?? { schema, table: 'migrations' };
  const ledgerTable = `${validateSchemaName(ledger.schema)}.${validateSchemaName(ledger.table)}`;
  const migrations = readMigrations(opts.dir ?? MIGRATIONS_DIR).map((m) => (library ? { ...m, sql: inSchema(m.sql, schema) } : m));
  // No statement or lock timeout, on purpose (whatever DATABASE_*_TIMEOUT_MS say): a migration of
  // a large table may run for minutes, and a second runner waits on the advisory lock until the
  // first is done.
  // A connect timeout and keepalive all the same (src/db/pool.ts): a dead link is noticed, not waited on.
  const client = new Client({
    connectionString: databaseUrl,
    statement_timeout: 0,
    lock_timeout: 0,
    connectionTimeoutMillis: DEFAULT_LINK_BOUNDS.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: DEFAULT_LINK_BOUNDS.keepAliveIdleMs,
  });
  await client.connect();
  const applied: Migration[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    if (library) {
      const legacy = await findLegacyLayout(client, ledgerTable);
      if (legacy !== undefined) {
        if (opts.upgradeFromPublic !== true) {
          throw new Error(
            `this database has the previous release's layout (the library's tables in public, ledger public.schema_migrations): ` +
              `upgrade it with \`temporal-outbox migrate --upgrade-from-public\` (docs/upgrading.md)`,
          );
        }
        await upgradeFromPublic(client, { schema, ledgerTable, legacy, migrations });
      }
    }
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${ledger.schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${ledgerTable} (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>(`SELECT version FROM ${ledgerTable}`);
    const done = new Set(rows.map((r) => r.version));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${ledgerTable} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.version}_${migration.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(migration);
    }
    // An upgrade keeps the previous release's key (also when a crash between the move and here has
    // the documented command run again, finding nothing left to move).
    const keyField = opts.keyField ?? (opts.upgradeFromPublic === true ? LEGACY_KEY_FIELD : undefined);
    if (library && keyField !== undefined) await recordKeyField(client, keyField, schema);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
  return applied;
}

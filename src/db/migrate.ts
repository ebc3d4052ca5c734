import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { PROJECT_ROOT } from '../config/env';
import { DEFAULT_LINK_BOUNDS } from './pool';

export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'migrations');
const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
// Any constant works; it only has to be the same for every runner of this project.
const MIGRATION_LOCK_KEY = 7_320_114;

export interface Migration {
  version: number;
  name: string;
  sql: string;
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
 * its ledger row, under a transaction-scoped advisory lock: two runners racing serialise, and
 * the second finds the work done. Safe to run any number of times.
 */
export async function migrate(databaseUrl: string, dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const migrations = readMigrations(dir);
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
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const { rows } = await client.query<{ version: number }>('SELECT version FROM schema_migrations');
    const done = new Set(rows.map((r) => r.version));
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(migration.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${migration.version}_${migration.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(migration);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
  return applied;
}

import type { Pool } from 'pg';
import { EXAMPLE_KEY_FIELD, migrateExample } from '../../examples/migrate';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { migrate } from '../../src/db/migrate';
import { createPool } from '../../src/db/pool';
import type { WorkerComponent } from '../../tools/local-stack/local-credentials';
import { admin, templateDatabase, templateDatabasesEnabled, withDatabase } from './database-templates';
import { uniqueName } from './ids';

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** false: an empty database (for testing the migration runner itself). Default: migrated. */
  migrated?: boolean;
  /**
   * With the library's migrations, the example's too (accounts, payments, the credit ledger,
   * shipments) and its key field (account_id), as the demo's setup does. Default true; false: the
   * library alone, as a service of its own would have it.
   */
  example?: boolean;
  /** The server to create it on (any database URL of it); default: the configured DATABASE_URL's. */
  serverUrl?: string;
  /** Readable start of its name (a benchmark names its own); default `test`. */
  prefix?: string;
}

/** The library's migrations with the example's key field, then the example's own, as the demo's setup does. */
export async function migrateWithExample(url: string): Promise<void> {
  await migrate(url, { keyField: EXAMPLE_KEY_FIELD });
  await migrateExample(url);
}

/**
 * A fresh database of its own for one test file or one benchmark run, next to the configured one
 * (so nothing here ever touches real outbox rows), fully migrated unless asked otherwise; `drop`
 * removes it.
 */
export async function createTestDatabase(opts: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const serverUrl = opts.serverUrl ?? loadStackConfig().database.url;
  const name = uniqueName(opts.prefix ?? 'test').replace(/-/g, '_');
  const url = withDatabase(serverUrl, name);
  const migrateInto = opts.example !== false ? migrateWithExample : (u: string) => migrate(u).then(() => undefined);
  if (opts.migrated === false) await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  else if (templateDatabasesEnabled()) {
    // A copy of this run's migrated template (test/kit/database-templates.ts): the same objects,
    // without applying every migration again.
    const template = await templateDatabase(serverUrl, opts.example !== false ? 'example' : 'library', migrateInto);
    await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  } else {
    await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
    await migrateInto(url);
  }
  // No statement timeout for this pool: tests and benchmarks seed in single statements (2,000
  // rows of up to 900 kB, a 200,000-row scene, millions of rows) that may run long on a busy
  // machine. Workers keep theirs.
  const pool = createPool(url, { max: 20, statement_timeout: 0 });
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end();
      await admin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * The URL a worker of `component` uses for the database `env.DATABASE_URL` names, when that
 * database is on the local stack's cluster: the same database under the component's own login
 * (tools/local-stack/local-credentials.ts), so tests run each worker under its role as `npm start` does.
 * Undefined for any other server (its owner's URL stays in use).
 */
export function componentDatabaseUrl(env: Record<string, string | undefined>, component: WorkerComponent): string | undefined {
  const databaseUrl = env.DATABASE_URL;
  if (databaseUrl === undefined) return undefined;
  const config = loadStackConfig({ ...process.env, ...env });
  const u = new URL(databaseUrl);
  if (!['127.0.0.1', 'localhost'].includes(u.hostname) || Number(u.port) !== config.local.pgPort) return undefined;
  const login = config.local.pgLogins()[component];
  u.username = encodeURIComponent(login.user);
  u.password = encodeURIComponent(login.password);
  return u.toString();
}

/** `env` plus the component's own database URL (see componentDatabaseUrl), unless it sets one. */
export function withComponentRole(env: Record<string, string>, component: WorkerComponent): Record<string, string> {
  const variable = `${component.toUpperCase()}_DATABASE_URL`;
  if (env[variable] !== undefined) return env;
  const url = componentDatabaseUrl(env, component);
  return url === undefined ? env : { ...env, [variable]: url };
}

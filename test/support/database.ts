import { Client, type Pool } from 'pg';
import { loadConfig } from '../../config/env';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import type { WorkerComponent } from '../../infra/local-credentials';
import { uniqueName } from './ids';

export interface TestDatabase {
  name: string;
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: withDatabase(loadConfig().database.url, 'postgres') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, fully migrated database of its own for one test file. `migrated: false` gives an empty
 * one (for testing the migration runner itself).
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const name = uniqueName('test').replace(/-/g, '_');
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(loadConfig().database.url, name);
  if (opts.migrated !== false) await migrate(url);
  const pool = createPool(url, { max: 20 });
  return {
    name,
    url,
    pool,
    async drop() {
      await pool.end();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/**
 * The URL a worker of `component` uses for the database `env.DATABASE_URL` names, when that
 * database is on the local stack's cluster: the same database under the component's own login
 * (infra/local-credentials.ts), so tests run each worker under its role as `npm start` does.
 * Undefined for any other server (its owner's URL stays in use).
 */
export function componentDatabaseUrl(env: Record<string, string | undefined>, component: WorkerComponent): string | undefined {
  const databaseUrl = env.DATABASE_URL;
  if (databaseUrl === undefined) return undefined;
  const config = loadConfig({ ...process.env, ...env });
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

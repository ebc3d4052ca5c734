import { Client, type Pool } from 'pg';
import { loadConfig } from '../../config/env';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
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
  // No statement timeout for the test's own pool: tests seed in single statements (2,000 rows of
  // up to 900 kB, a 200,000-row scene) that may run long on a busy machine. Workers keep theirs.
  const pool = createPool(url, { max: 20, statement_timeout: 0 });
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

import crypto from 'node:crypto';
import { Client, type Pool } from 'pg';
import { migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';

export interface ScratchDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * A freshly created, migrated database for one benchmark run, next to the configured one (so a
 * benchmark never touches real outbox rows); `drop` removes it.
 */
export async function createScratchDatabase(serverUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${crypto.randomBytes(3).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new Client({ connectionString: withDatabase(serverUrl, 'postgres') });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = withDatabase(serverUrl, name);
  await migrate(url);
  // Benchmarks seed millions of rows in single statements: no statement timeout for this pool.
  const pool = createPool(url, { max: 20, statement_timeout: 0 });
  return {
    url,
    pool,
    async drop() {
      await pool.end();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

import { Pool, type PoolConfig } from 'pg';

export function createPool(databaseUrl: string, options: Partial<PoolConfig> = {}): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max: 10, ...options });
  // An idle client losing its server (PostgreSQL restarted) must not crash the worker; the next
  // query gets a fresh connection and a transient error that Temporal retries.
  pool.on('error', () => undefined);
  return pool;
}

/** Runs `work` in one transaction on one pooled client, rolling back on any error. */
export async function inTransaction<T>(pool: Pool, work: (client: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

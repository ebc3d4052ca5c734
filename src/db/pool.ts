import { Pool, type PoolConfig } from 'pg';
import { DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS, type Config } from '../config/env';
import { DEFAULT_SCHEMA } from './schema';
import { schemaClientClass } from './schema-client';

/**
 * Every pool's connections carry a statement timeout and a lock timeout (server side): a query
 * stuck behind a lock or running away fails with an error its caller retries, instead of holding
 * a connection (and the batch waiting on it) for ever. Without `options` naming them, the
 * defaults of DATABASE_STATEMENT_TIMEOUT_MS / DATABASE_LOCK_TIMEOUT_MS apply; pass
 * `databaseTimeouts(config)` to honour the configured values, or explicit ones where a
 * statement legitimately runs longer (retention, the doctor, seeding the scene).
 *
 * `schema` names the library's schema (src/db/schema.ts): every text the pool runs, through
 * `pool.query` or a checked-out client, is rewritten into it when it is not the default.
 */
export function createPool(databaseUrl: string, options: Partial<PoolConfig> & { schema?: string } = {}): Pool {
  const { schema = DEFAULT_SCHEMA, ...poolOptions } = options;
  const client = schemaClientClass(schema);
  const pool = new Pool({
    connectionString: databaseUrl,
    max: 10,
    statement_timeout: DEFAULT_STATEMENT_TIMEOUT_MS,
    lock_timeout: DEFAULT_LOCK_TIMEOUT_MS,
    ...poolOptions,
    ...(client ? { Client: client } : {}),
  });
  // An idle client losing its server (PostgreSQL restarted) must not crash the worker; the next
  // query gets a fresh connection and a transient error that Temporal retries.
  pool.on('error', () => undefined);
  return pool;
}

/** The configured statement and lock timeouts, as pool options. */
export function databaseTimeouts(config: Config): Pick<PoolConfig, 'statement_timeout' | 'lock_timeout'> {
  return { statement_timeout: config.database.statementTimeoutMs, lock_timeout: config.database.lockTimeoutMs };
}

/** Runs `work` in one transaction on one pooled client, rolling back on any error. */
export async function inTransaction<T>(pool: Pool, work: (client: import('pg').PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  // A connection that dies while checked out (a failover, a server crash) reports it as an
  // 'error' event on the client, which the pool does not listen to then: without a listener,
  // Node ends the process. The query in flight rejects too, so the event needs only noting, and
  // the broken connection is destroyed rather than handed out again.
  let broken: Error | undefined;
  const onError = (err: Error) => (broken = err);
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.off('error', onError);
    client.release(broken);
  }
}

import { Pool, type PoolConfig } from 'pg';
import { DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS, type Config } from '../config/env';
import { destroyOnReadTimeout } from './read-timeout';
import { DEFAULT_SCHEMA } from './schema';
import { schemaClientClass } from './schema-client';

/** The defaults of DATABASE_CONNECT_TIMEOUT_MS, DATABASE_QUERY_TIMEOUT_MS, DATABASE_KEEPALIVE_IDLE_MS. */
export const DEFAULT_LINK_BOUNDS = { connectTimeoutMs: 5_000, queryTimeoutMs: 35_000, keepAliveIdleMs: 5_000 } as const;
/** A client-side query timeout stays this far above the statement timeout: the server's error, when it can send one, comes first. */
const QUERY_TIMEOUT_MARGIN_MS = 5_000;

export interface LinkBounds {
  connectTimeoutMs: number;
  queryTimeoutMs: number;
  keepAliveIdleMs: number;
}

/**
 * Client-side bounds for one PostgreSQL connection (docs/guarantees.md#dead-links): connect
 * timeout, TCP keepalive after a short idle, and a query timeout (0: none) that is never below
 * the statement timeout plus a margin. The statement timeout alone bounds nothing on a dead link:
 * the server that enforces it never receives the query.
 */
export function linkOptions(bounds: LinkBounds, statementTimeoutMs: number | undefined): Partial<PoolConfig> {
  const queryTimeout = statementTimeoutMs === 0 ? 0 : Math.max(bounds.queryTimeoutMs, (statementTimeoutMs ?? 0) + QUERY_TIMEOUT_MARGIN_MS);
  return {
    connectionTimeoutMillis: bounds.connectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: bounds.keepAliveIdleMs,
    ...(queryTimeout > 0 ? { query_timeout: queryTimeout } : {}),
  };
}

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
 *
 * And client-side bounds (`linkOptions`), from the defaults unless `options` or
 * `databaseTimeouts(config)` set them: a connection whose query got no answer within the query
 * timeout is destroyed, never handed out again.
 */
export function createPool(databaseUrl: string, options: Partial<PoolConfig> & { schema?: string } = {}): Pool {
  const { schema = DEFAULT_SCHEMA, ...poolOptions } = options;
  const client = schemaClientClass(schema);
  const merged: PoolConfig = {
    connectionString: databaseUrl,
    max: 10,
    statement_timeout: DEFAULT_STATEMENT_TIMEOUT_MS,
    lock_timeout: DEFAULT_LOCK_TIMEOUT_MS,
    ...linkOptions(DEFAULT_LINK_BOUNDS, undefined),
    ...poolOptions,
    ...(client ? { Client: client } : {}),
  };
  // Whatever statement timeout won (a caller may raise it after `databaseTimeouts`), the query
  // timeout stays above it; none with none (a seeding pool's single long statements).
  const statementTimeout = merged.statement_timeout || 0;
  merged.query_timeout = statementTimeout === 0 ? undefined : Math.max(merged.query_timeout || 0, statementTimeout + QUERY_TIMEOUT_MARGIN_MS);
  const pool = new Pool(merged);
  // An idle client losing its server (PostgreSQL restarted) must not crash the worker; the next
  // query gets a fresh connection and a transient error that Temporal retries.
  pool.on('error', () => undefined);
  pool.on('connect', destroyOnReadTimeout);
  return pool;
}

/** The configured statement and lock timeouts and link bounds, as pool options. */
export function databaseTimeouts(config: Config): Partial<PoolConfig> {
  return {
    statement_timeout: config.database.statementTimeoutMs,
    lock_timeout: config.database.lockTimeoutMs,
    ...linkOptions(config.links.database, config.database.statementTimeoutMs),
  };
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

// How long closing a pool waits for its connections' goodbyes.
const END_WAIT_MS = 5_000;

/**
 * Ends a pool, waiting at most `waitMs`: a connection on a dead link never sees the server's
 * side of the close, and `pool.end()` would wait for it for ever (a worker that could not stop
 * on SIGTERM). What is left is abandoned to the process's exit.
 */
export async function endPool(pool: Pool, waitMs = END_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([pool.end().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, waitMs).unref()))]);
  clearTimeout(timer);
}

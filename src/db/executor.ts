import type { QueryResult, QueryResultRow } from 'pg';

/**
 * The narrow database dependency every query module takes: a pg Pool, a pooled client, or a
 * caller's client in the middle of its own transaction all fit. That last case is the point of
 * an outbox: enqueue must write with the caller's transaction, not a connection of its own.
 */
export interface SqlExecutor {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

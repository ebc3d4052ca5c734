import type { ClientBase } from 'pg';

// node-postgres's own message when `query_timeout` fires (pg/lib/client.js).
const READ_TIMEOUT = 'Query read timeout';

/**
 * Makes a query that timed out on the client side (`query_timeout`) end its connection.
 * node-postgres fails the query's promise but, unless pipelining, keeps the connection with the
 * unanswered query still active: released to a pool as usual, it would be handed out again and
 * every later query on it would queue behind the dead one. Destroying the socket marks the client
 * unusable, so a pool drops it on release (pg-pool checks `_queryable`) and the next caller gets
 * a new connection. The socket error this raises is absorbed here: the query's own rejection
 * already told its caller.
 */
export function destroyOnReadTimeout(client: ClientBase): void {
  const marked = client as ClientBase & { readTimeoutGuard?: true; connection?: { stream?: { destroy(): void } } };
  if (marked.readTimeoutGuard) return;
  marked.readTimeoutGuard = true;
  client.on('error', () => undefined);
  const destroyIfTimedOut = (err: unknown) => {
    if (err instanceof Error && err.message === READ_TIMEOUT) marked.connection?.stream?.destroy();
  };
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const last = args.at(-1);
    if (typeof last === 'function') {
      args[args.length - 1] = (err: unknown, result: unknown) => {
        destroyIfTimedOut(err);
        (last as (err: unknown, result: unknown) => void)(err, result);
      };
      return query(...args);
    }
    const result = query(...args);
    if (result instanceof Promise) result.catch(destroyIfTimedOut);
    return result;
  }) as typeof client.query;
}

import { Client, type Pool, type PoolClient, type QueryResult, type QueryResultRow } from 'pg';
import type { SqlExecutor } from './executor';
import { DEFAULT_SCHEMA, inSchema, validateSchemaName } from './schema';

type ClientClass = typeof Client;

/** pg's query arguments with the text (a string, or a config's `text`; not a Submittable's) rewritten. */
function rewriteQueryArgs(args: unknown[], schema: string): unknown[] {
  const [config] = args;
  if (typeof config === 'string') return [inSchema(config, schema), ...args.slice(1)];
  if (config !== null && typeof config === 'object' && typeof (config as { text?: unknown }).text === 'string' && typeof (config as { submit?: unknown }).submit !== 'function') {
    return [{ ...config, text: inSchema((config as { text: string }).text, schema) }, ...args.slice(1)];
  }
  return args;
}

const classes = new Map<string, ClientClass>();

/**
 * A pg Client class whose every query text (a string, or a config's `text`) is rewritten into
 * `schema`; handed to a Pool as its `Client`, it covers `pool.query` and checked-out clients
 * alike, so a transaction's statements need no wrapping of their own.
 */
export function schemaClientClass(schema: string): ClientClass | undefined {
  if (schema === DEFAULT_SCHEMA) return undefined;
  validateSchemaName(schema);
  let cls = classes.get(schema);
  if (cls === undefined) {
    class SchemaClient extends Client {
      override query(...args: unknown[]): never {
        return (Client.prototype.query as (...a: unknown[]) => never).apply(this, rewriteQueryArgs(args, schema));
      }
    }
    cls = SchemaClient as unknown as ClientClass;
    classes.set(schema, cls);
  }
  return cls;
}

/** `db` with its texts rewritten into `schema`: for a caller's executor (its pool, its transaction). */
export function inSchemaExecutor(db: SqlExecutor, schema: string = DEFAULT_SCHEMA): SqlExecutor {
  if (schema === DEFAULT_SCHEMA) return db;
  validateSchemaName(schema);
  return {
    query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>> {
      return db.query<R>(inSchema(text, schema), values);
    },
  };
}

function rewritingQuery(target: { query: (...args: unknown[]) => unknown }, schema: string) {
  return (...args: unknown[]) => target.query(...rewriteQueryArgs(args, schema));
}

function bound(target: object, prop: string | symbol): unknown {
  const value = Reflect.get(target, prop) as unknown;
  return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
}

/**
 * A service's own pg Pool seen by the library in `schema`: `query` and the clients `connect`
 * hands out rewrite the library's texts (the pool itself, and the service's own use of it, are
 * left as they are). For a pool the library creates, createPool's `schema` option does this.
 */
export function schemaPool(pool: Pool, schema: string = DEFAULT_SCHEMA): Pool {
  if (schema === DEFAULT_SCHEMA) return pool;
  validateSchemaName(schema);
  const wrapClient = (client: PoolClient): PoolClient =>
    new Proxy(client, { get: (target, prop) => (prop === 'query' ? rewritingQuery(target as never, schema) : bound(target, prop)) });
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'query') return rewritingQuery(target as never, schema);
      if (prop === 'connect') {
        return (callback?: (err: Error | undefined, client: PoolClient | undefined, done: (release?: unknown) => void) => void) => {
          if (callback) return target.connect((err, client, done) => callback(err, client && wrapClient(client), done));
          return target.connect().then(wrapClient);
        };
      }
      return bound(target, prop);
    },
  });
}

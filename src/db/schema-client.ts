import { Client, type QueryResult, type QueryResultRow } from 'pg';
import type { SqlExecutor } from './executor';
import { DEFAULT_SCHEMA, inSchema, validateSchemaName } from './schema';

type ClientClass = typeof Client;
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
        const [config] = args;
        if (typeof config === 'string') args[0] = inSchema(config, schema);
        else if (config !== null && typeof config === 'object' && typeof (config as { text?: unknown }).text === 'string' && typeof (config as { submit?: unknown }).submit !== 'function') {
          args[0] = { ...config, text: inSchema((config as { text: string }).text, schema) };
        }
        return (Client.prototype.query as (...a: unknown[]) => never).apply(this, args);
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

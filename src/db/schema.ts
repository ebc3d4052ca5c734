// The library's own schema. Every SQL text of the library (queries, migrations) is written
// qualified with the default name, `temporal_outbox.<object>`, so it reads as the table it
// touches and runs as written in the default case. A service that chose another name gets each
// text rewritten once (then cached) by the executors and pools the library issues SQL through.

/** The schema every library object lives in unless configured otherwise. */
export const DEFAULT_SCHEMA = 'temporal_outbox';

// Lower-case unquoted identifiers only: the name is spliced into SQL text (it cannot be a bind
// parameter), so nothing that needs quoting, and nothing PostgreSQL would fold or truncate.
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;
// `temporal_outbox.<object>`, and the bare name where a statement names the schema itself
// (CREATE SCHEMA, GRANT USAGE ON SCHEMA).
const QUALIFIER = /\btemporal_outbox(?=\.)|(?<=\bSCHEMA\s+(?:IF NOT EXISTS\s+)?)temporal_outbox\b/g;

export class SchemaNameError extends Error {
  override name = 'SchemaNameError';
}

/** The name itself, once checked; throws with a readable reason otherwise. */
export function validateSchemaName(schema: string): string {
  if (typeof schema !== 'string' || !IDENTIFIER.test(schema)) {
    throw new SchemaNameError(`schema must be a lower-case SQL identifier (letters, digits, _; at most 63), got ${JSON.stringify(schema)}`);
  }
  if (schema.startsWith('pg_')) throw new SchemaNameError(`schema ${schema}: names starting with pg_ are reserved by PostgreSQL`);
  return schema;
}

// Texts are the library's constants plus a few built per batch size, so the cache stays small;
// the bound only guards against a caller passing ever-new texts.
const CACHE_LIMIT = 2_000;
const caches = new Map<string, Map<string, string>>();

/** `text` with the default qualifier replaced by `schema`'s (unchanged for the default). */
export function inSchema(text: string, schema: string = DEFAULT_SCHEMA): string {
  if (schema === DEFAULT_SCHEMA) return text;
  let cache = caches.get(schema);
  if (cache === undefined) {
    validateSchemaName(schema);
    cache = new Map();
    caches.set(schema, cache);
  }
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const rewritten = text.replace(QUALIFIER, schema);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, rewritten);
  return rewritten;
}

// Public API: writing events. `enqueue` inserts an outbox row with the caller's executor, i.e.
// inside the caller's transaction; the tables come from the shipped migrations, in the library's
// own schema (temporal_outbox unless configured).
export { enqueue, EnqueueValidationError, type EnqueueInput, type EnqueueOptions, type EnqueueResult } from '../outbox/enqueue';
export type { SqlExecutor } from '../db/executor';
export { createPool, inTransaction } from '../db/pool';
// Large array parameters as PostgreSQL array literals, built in one pass (cheaper than pg's own for thousands of elements).
export { integerArrayLiteral, textArrayLiteral } from '../db/array-literal';
export { migrate, readMigrations, MIGRATIONS_DIR, type Migration, type MigrateOptions } from '../db/migrate';
export { DEFAULT_SCHEMA } from '../db/schema';
export { schemaPool } from '../db/schema-client';

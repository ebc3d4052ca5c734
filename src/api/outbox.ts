// Public API: writing events. `enqueue` inserts an outbox row with the caller's executor, i.e.
// inside the caller's transaction; the schema comes from the shipped migrations.
export { enqueue, EnqueueValidationError, type EnqueueInput, type EnqueueResult } from '../outbox/enqueue';
export type { SqlExecutor } from '../db/executor';
export { createPool, inTransaction } from '../db/pool';
// Large array parameters as PostgreSQL array literals, built in one pass (cheaper than pg's own for thousands of elements).
export { integerArrayLiteral, textArrayLiteral } from '../db/array-literal';
export { migrate, readMigrations, MIGRATIONS_DIR, type Migration } from '../db/migrate';

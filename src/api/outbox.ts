// Public API: writing events. `enqueue` inserts an outbox row with the caller's executor, i.e.
// inside the caller's transaction; the schema comes from the shipped migrations.
export { enqueue, EnqueueValidationError, type EnqueueInput, type EnqueueResult } from '../outbox/enqueue';
export type { SqlExecutor } from '../db/executor';
export { createPool, inTransaction } from '../db/pool';
export { migrate, readMigrations, MIGRATIONS_DIR, type Migration } from '../db/migrate';

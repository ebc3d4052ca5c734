import path from 'node:path';
import { migrate, type Migration } from 'temporal-outbox';

/** The payload field the example's plain-SQL producers key their rows by: one account's events stay in order. */
export const EXAMPLE_KEY_FIELD = 'account_id';

// Each example keeps its own migrations and its own ledger, in the service's schema (public), as
// an adopter's service does: the library's runner, given a folder and a ledger.
const EXAMPLE_MIGRATIONS = [
  { dir: path.join(__dirname, 'payments', 'migrations'), ledger: { schema: 'public', table: 'example_payments_migrations' } },
  { dir: path.join(__dirname, 'shipping', 'migrations'), ledger: { schema: 'public', table: 'example_shipping_migrations' } },
];

/** Applies the example's own migrations (after the library's: they grant to its roles). Idempotent. */
export async function migrateExample(databaseUrl: string): Promise<Migration[]> {
  const applied: Migration[] = [];
  for (const set of EXAMPLE_MIGRATIONS) applied.push(...(await migrate(databaseUrl, set)));
  return applied;
}

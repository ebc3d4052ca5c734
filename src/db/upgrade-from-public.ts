import type { Client } from 'pg';
import type { Migration } from './migration';

// What the previous release created in public and this one keeps in the library's schema. The
// example's tables (accounts, payments, payments_credit_ledger, shipments) stay where they are:
// they are the service's, and the example's own migrations adopt them (IF NOT EXISTS).
const LIBRARY_TABLES = ['outbox_events', 'inbox_processed_events', 'inbox_parked_events', 'inbox_skipped_event_types', 'outbox_relay_layout', 'outbox_relay_workers'];
const LIBRARY_FUNCTIONS = ['outbox_events_notify()', 'outbox_events_payload_bytes()'];
// The previous release's last migration: every library migration up to it was applied in public.
const LAST_LEGACY_VERSION = 52;
/** The previous release keyed a row without event_key by this payload field; an upgrade keeps it unless told otherwise. */
export const LEGACY_KEY_FIELD = 'account_id';

export interface LegacyLayout {
  versions: Set<number>;
}

/**
 * The previous release's layout: its outbox table in public (with the shard column only it has)
 * and its ledger public.schema_migrations (with the name column a Rails or golang-migrate ledger
 * of that name lacks), and no ledger of the library's schema yet.
 */
export async function findLegacyLayout(client: Client, ledgerTable: string): Promise<LegacyLayout | undefined> {
  const { rows } = await client.query<{ legacy: boolean }>(
    `SELECT to_regclass($1) IS NULL
        AND EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'outbox_events' AND column_name = 'shard_hash')
        AND EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = 'public' AND table_name = 'schema_migrations' AND column_name = 'name') AS legacy`,
    [ledgerTable],
  );
  if (!rows[0]?.legacy) return undefined;
  const versions = await client.query<{ version: string }>(`SELECT version::text AS version FROM public.schema_migrations`);
  return { versions: new Set(versions.rows.map((r) => Number(r.version))) };
}

/**
 * Moves the library's objects from public into `schema` in one transaction: ALTER … SET SCHEMA
 * keeps every row, index, sequence, trigger and grant. Pending rows without a key get the key the
 * previous release derived for them (payload.account_id), so they stay on their key's shard and
 * Kafka partition, in order with what comes after. The old ledger moves along as
 * `<schema>.legacy_migrations` (freeing the name schema_migrations for the service), and the new
 * ledger records the library migrations it covered; later ones then run as usual (0053 rewrites
 * the notify function's body, which still names the tables unqualified). Workers of the previous
 * release must be stopped first: their statements name the tables in public.
 */
export async function upgradeFromPublic(client: Client, args: { schema: string; ledgerTable: string; legacy: LegacyLayout; migrations: Migration[] }): Promise<void> {
  const covered = args.migrations.filter((m) => m.version <= LAST_LEGACY_VERSION);
  const missing = covered.filter((m) => !args.legacy.versions.has(m.version));
  if (missing.length > 0) {
    throw new Error(
      `upgrade from public: the database lacks migrations of the previous release (${missing.map((m) => String(m.version).padStart(4, '0')).join(', ')}); ` +
        'apply them with that release first',
    );
  }
  const s = args.schema;
  await client.query('BEGIN');
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
    for (const table of LIBRARY_TABLES) await client.query(`ALTER TABLE public.${table} SET SCHEMA ${s}`);
    for (const fn of LIBRARY_FUNCTIONS) await client.query(`ALTER FUNCTION public.${fn} SET SCHEMA ${s}`);
    await client.query(
      `UPDATE ${s}.outbox_events SET event_key = payload ->> $1::text
        WHERE published_at IS NULL AND event_key IS NULL AND payload ->> $1::text IS NOT NULL`,
      [LEGACY_KEY_FIELD],
    );
    await client.query(`ALTER TABLE public.schema_migrations SET SCHEMA ${s}`);
    await client.query(`ALTER TABLE ${s}.schema_migrations RENAME TO legacy_migrations`);
    await client.query(`CREATE TABLE ${args.ledgerTable} (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    await client.query(`INSERT INTO ${args.ledgerTable} (version, name) SELECT * FROM unnest($1::int[], $2::text[])`, [
      covered.map((m) => m.version),
      covered.map((m) => m.name),
    ]);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw new Error(`upgrade from public failed (nothing was moved): ${(err as Error).message}`, { cause: err });
  }
}

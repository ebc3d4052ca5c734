import type { Command } from 'commander';
import { loadConfig } from '../../config/env';
import { migrate } from '../../db/migrate';
import { databaseUrl } from '../../config/resolve';

export function registerMigrateCommand(program: Command) {
  program
    .command('migrate')
    .description('apply the SQL migrations the database lacks, in the library\'s schema (OUTBOX_SCHEMA, default temporal_outbox; safe to run twice, or concurrently)')
    .option('--key-field <field>', 'the payload field a row inserted without a key is keyed (sharded, ordered) by; recorded with the relay layout')
    .option('--upgrade-from-public', 'move a database laid out by the previous release (library tables in public) into the schema first (docs/upgrading.md)')
    .action(async (opts: { keyField?: string; upgradeFromPublic?: boolean }) => {
      const config = loadConfig();
      const applied = await migrate(databaseUrl(config), { schema: config.database.schema, keyField: opts.keyField, upgradeFromPublic: opts.upgradeFromPublic === true });
      process.stdout.write(applied.length ? `applied: ${applied.map((m) => `${m.version}_${m.name}`).join(', ')}\n` : 'schema is up to date\n');
    });
}

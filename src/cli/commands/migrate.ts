import type { Command } from 'commander';
import { loadConfig } from '../../config/env';
import { migrate } from '../../db/migrate';
import { databaseUrl } from '../../config/resolve';

export function registerMigrateCommand(program: Command) {
  program
    .command('migrate')
    .description('apply the SQL migrations the database lacks (safe to run twice, or concurrently)')
    .action(async () => {
      const applied = await migrate(databaseUrl(loadConfig()));
      process.stdout.write(applied.length ? `applied: ${applied.map((m) => `${m.version}_${m.name}`).join(', ')}\n` : 'schema is up to date\n');
    });
}

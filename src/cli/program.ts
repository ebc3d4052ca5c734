import { Command } from 'commander';
import { ConfigError, loadConfig } from '../config/env';
import { registerAsyncApiCommand } from './commands/asyncapi';
import { registerAuditCommands } from './commands/audit';
import { registerInboxCommands } from './commands/inbox';
import { registerDoctorCommand } from './commands/doctor';
import { registerMigrateCommand } from './commands/migrate';
import { registerRelayCommands } from './commands/relay';
import { registerRetentionCommands } from './commands/retention';
import { registerSetupCommand } from './commands/setup';

/** The package's CLI (`temporal-outbox`, its `bin`) with every command registered; src/cli/main.ts runs it, tests inspect it. */
export function buildProgram(): Command {
  const program = new Command('temporal-outbox').description('temporal-outbox: transactional outbox and inbox for PostgreSQL and Kafka, run by Temporal');
  registerMigrateCommand(program);
  registerRelayCommands(program);
  registerInboxCommands(program);
  registerSetupCommand(program);
  registerRetentionCommands(program);
  registerDoctorCommand(program);
  registerAuditCommands(program);
  registerAsyncApiCommand(program);
  // Deprecated settings still work; each command run names their replacements once, on stderr.
  program.hook('preAction', () => {
    try {
      for (const notice of loadConfig().notices) process.stderr.write(`notice: ${notice}\n`);
    } catch (err) {
      // An invalid configuration is the command's to report, with its own message.
      if (!(err instanceof ConfigError)) throw err;
    }
  });
  return program;
}

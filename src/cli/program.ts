import { Command } from 'commander';
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
  return program;
}

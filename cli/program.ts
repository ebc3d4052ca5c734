import { Command } from 'commander';
import { registerInboxCommands } from './commands/inbox';
import { registerDoctorCommand } from './commands/doctor';
import { registerDemoCommand } from './commands/demo';
import { registerMigrateCommand } from './commands/migrate';
import { registerRelayCommands } from './commands/relay';
import { registerRetentionCommands } from './commands/retention';
import { registerSetupCommand } from './commands/setup';
import { registerStackCommands } from './commands/stack';
import { registerTrafficCommand } from './commands/traffic';

/** The `outbox` CLI with every command registered; cli/main.ts runs it, tests inspect it. */
export function buildProgram(): Command {
  const program = new Command('outbox').description('temporal-outbox: transactional outbox and inbox for PostgreSQL and Kafka, run by Temporal');
  registerStackCommands(program);
  registerMigrateCommand(program);
  registerDemoCommand(program);
  registerRelayCommands(program);
  registerInboxCommands(program);
  registerSetupCommand(program);
  registerRetentionCommands(program);
  registerDoctorCommand(program);
  registerTrafficCommand(program);
  return program;
}

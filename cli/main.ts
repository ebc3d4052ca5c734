import { Command } from 'commander';
import { ConfigError } from '../config/env';
import { StackError } from '../infra/errors';
import { registerInboxCommands } from './commands/inbox';
import { registerDoctorCommand } from './commands/doctor';
import { registerDemoCommand } from './commands/demo';
import { registerMigrateCommand } from './commands/migrate';
import { registerRelayCommands } from './commands/relay';
import { registerRetentionCommands } from './commands/retention';
import { registerSetupCommand } from './commands/setup';
import { registerStackCommands } from './commands/stack';

const program = new Command('outbox').description('temporal-outbox: transactional outbox and inbox for PostgreSQL and Kafka, run by Temporal');
registerStackCommands(program);
registerMigrateCommand(program);
registerDemoCommand(program);
registerRelayCommands(program);
registerInboxCommands(program);
registerSetupCommand(program);
registerRetentionCommands(program);
registerDoctorCommand(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  // Known problems print one sentence that names the fix; anything else keeps its stack trace.
  if (err instanceof StackError || err instanceof ConfigError) process.stderr.write(`error: ${err.message}\n`);
  else process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

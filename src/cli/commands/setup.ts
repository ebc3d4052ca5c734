import type { Command } from 'commander';
import { setUp } from '../../setup';
import { loadConfig } from '../../config/env';

export function registerSetupCommand(program: Command) {
  program
    .command('setup')
    .description('apply migrations, create Kafka topics and register Temporal search attributes (idempotent)')
    .action(async () => {
      const done = await setUp(loadConfig());
      const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none needed');
      console.log(`migrations applied: ${list(done.migrations)}`);
      console.log(`topics created: ${list(done.topics)}`);
      console.log(done.topicRetention);
      console.log(`search attributes registered: ${list(done.searchAttributes)}`);
    });
}

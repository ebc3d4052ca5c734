import type { Command } from 'commander';
import { setUp } from '../../setup';
import { loadConfig } from '../../config/env';

export function registerSetupCommand(program: Command) {
  program
    .command('setup')
    .description('apply migrations, create Kafka topics and register Temporal search attributes (idempotent)')
    .option('--key-field <field>', 'the payload field a row inserted without a key is keyed (sharded, ordered) by')
    .action(async (opts: { keyField?: string }) => {
      const done = await setUp(loadConfig(), { keyField: opts.keyField });
      const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none needed');
      console.log(`migrations applied: ${list(done.migrations)}`);
      console.log(`topics created: ${list(done.topics)}`);
      console.log(done.topicRetention);
      console.log(`search attributes registered: ${list(done.searchAttributes)}`);
    });
}

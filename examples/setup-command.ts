import type { Command } from 'commander';
import { databaseUrl, loadConfig, setUp } from 'temporal-outbox';
import { EXAMPLE_KEY_FIELD, migrateExample } from './migrate';

/**
 * `outbox example-setup`: what the example's service runs before its workers start, as `npm start`
 * does: the library's setup with the example's key field, then the example's own migrations.
 */
export function registerExampleSetupCommand(program: Command) {
  program
    .command('example-setup')
    .description(`the library's setup (key field ${EXAMPLE_KEY_FIELD}), then the payments and shipping example's own migrations (idempotent)`)
    .action(async () => {
      const config = loadConfig();
      const done = await setUp(config, { keyField: EXAMPLE_KEY_FIELD });
      const example = await migrateExample(databaseUrl(config));
      const list = (xs: string[]) => (xs.length ? xs.join(', ') : 'none needed');
      process.stdout.write(`library migrations applied: ${list(done.migrations)}\nexample migrations applied: ${list(example.map((m) => `${m.version}_${m.name}`))}\n`);
      process.stdout.write(`topics created: ${list(done.topics)}\n${done.topicRetention}\nsearch attributes registered: ${list(done.searchAttributes)}\n`);
    });
}

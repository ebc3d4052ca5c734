import { Option, type Command } from 'commander';

/** `temporal-outbox relay worker`: the bundled relay worker process, optionally with the service's event types. */
export function registerRelayWorkerCommand(relay: Command) {
  relay
    .command('worker')
    .description('run a relay worker in this process until SIGINT/SIGTERM (the same as `node dist/workers/relay.worker.js`); settings from the environment')
    .addOption(
      new Option(
        '--events <module>',
        'check each row of a known type against its schema and park the ones it refuses, with the schema\'s message: your module that exports `asyncApi` ({ events: [defineEvent definitions] }), the one `asyncapi --module` reads; a .ts one needs a TypeScript loader (node --import tsx)',
      ).env('OUTBOX_EVENTS_MODULE'),
    )
    .action((o: { events?: string }) => {
      // Loaded here, not at the top: the other commands need not load the Temporal worker.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { runRelayWorkerMain } = require('../../../workers/relay.worker') as typeof import('../../../workers/relay.worker');
      runRelayWorkerMain(o.events);
    });
}

import fs from 'node:fs';
import type { Command } from 'commander';
import { buildAsyncApiDocument } from '../../asyncapi/build-document';
import { loadAsyncApiSource } from '../../asyncapi/load-source';
import { loadConfig } from '../../config/env';

export function registerAsyncApiCommand(program: Command) {
  program
    .command('asyncapi')
    .description('write the AsyncAPI 3.0 document (JSON) of your event types, topics (KAFKA_TOPIC, KAFKA_TOPIC_ROUTES) and handlers')
    .requiredOption('--module <path>', 'your module that exports `asyncApi` ({ events, handlers?, info? }); a .ts one needs a TypeScript loader (npx tsx)')
    .option('--out <file>', 'write the document here instead of stdout')
    .action(async (opts: { module: string; out?: string }) => {
      const source = await loadAsyncApiSource(opts.module);
      const text = `${JSON.stringify(buildAsyncApiDocument(source, loadConfig()), null, 2)}\n`;
      if (opts.out) fs.writeFileSync(opts.out, text);
      else process.stdout.write(text);
    });
}

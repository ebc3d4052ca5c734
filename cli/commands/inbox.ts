import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { loadConfig } from '../../config/env';
import { createPool } from '../../db/pool';
import { findEventWorkflows } from '../../inbox/find-event-workflows';
import { listParkedEvents } from '../../inbox/list-parked-events';
import { pruneProcessedEvents } from '../../inbox/prune-processed-events';
import { temporalConnectionOptions } from '../../temporal/connection-options';

export function registerInboxCommands(program: Command) {
  const inbox = program.command('inbox').description('the consumer side: parked events and processed-id retention');

  inbox
    .command('parked')
    .description('list events the consumer could not apply, newest first, with their reason')
    .option('-n, --limit <n>', 'how many to show', '50')
    .option('--consumer <name>', 'only this inbox consumer (default: all)')
    .option('--json', 'one JSON object per line')
    .action(async (opts: { limit: string; consumer?: string; json?: boolean }) => {
      const pool = createPool(loadConfig().database.url, { max: 1 });
      try {
        const rows = await listParkedEvents(pool, { consumer: opts.consumer, limit: Number(opts.limit) });
        if (opts.json) {
          for (const r of rows) console.log(JSON.stringify(r));
          return;
        }
        if (rows.length === 0) {
          console.log('no parked events');
          return;
        }
        for (const r of rows) {
          const where = `${r.topic}/${r.kafka_partition}@${r.kafka_offset}`;
          const value = r.raw_value === null ? '(no value)' : JSON.stringify(r.raw_value.length > 120 ? `${r.raw_value.slice(0, 117)}...` : r.raw_value);
          console.log(`${r.parked_at.toISOString()}  ${where}  event=${r.event_id ?? '-'}  reason: ${r.reason}\n    value: ${value}`);
        }
        console.log(`${rows.length} parked event(s) shown`);
      } finally {
        await pool.end();
      }
    });

  inbox
    .command('find')
    .description('the applyEventsWorkflow run(s) that carried a credit event: its topic, partition and offset, the UI list query, the workflow ids')
    .requiredOption('--event-id <id>', 'the event id (payload.event_id)')
    .action(async (opts: { eventId: string }) => {
      const config = loadConfig();
      const pool = createPool(config.database.url, { max: 1 });
      const connection = await Connection.connect(temporalConnectionOptions(config));
      try {
        const found = await findEventWorkflows(pool, new Client({ connection, namespace: config.temporal.namespace }), opts.eventId);
        if (found.length === 0) {
          console.log(`event ${opts.eventId} has no applied credit (not applied, parked: npm run outbox -- inbox parked, or applied before the credit ledger existed)`);
          process.exitCode = 1;
          return;
        }
        for (const f of found) {
          console.log(`event ${f.eventId}: ${f.consumer} credited ${f.amount} to account ${f.accountId}; Kafka ${f.topic} partition ${f.partition}, offset ${f.offset}`);
          console.log(`  UI list query: ${f.query}`);
          console.log(`  ${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}/workflows?query=${encodeURIComponent(f.query)}`);
          for (const w of f.workflows) console.log(`  ${w.holdsEvent ? 'carried it:' : 'listed, not it:'} ${w.workflowId} (run ${w.runId})`);
          if (f.workflows.length === 0) console.log('  no applyEventsWorkflow run listed (closed ones are kept for the namespace retention only)');
        }
      } finally {
        await connection.close();
        await pool.end();
      }
    });

  inbox
    .command('prune')
    .description('forget processed event ids older than INBOX_RETENTION_MS, now (the retention schedule does this regularly)')
    .option('--batch-size <n>', 'rows per DELETE', '10000')
    .action(async (opts: { batchSize: string }) => {
      const config = loadConfig();
      const pool = createPool(config.database.url, { max: 1 });
      try {
        const result = await pruneProcessedEvents(pool, { horizonMs: config.inbox.retentionMs, batchSize: Number(opts.batchSize), timeBudgetMs: config.retention.timeBudgetMs });
        console.log(JSON.stringify(result));
      } finally {
        await pool.end();
      }
    });
}

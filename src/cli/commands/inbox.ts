import type { Command } from 'commander';
import { loadConfig } from '../../config/env';
import { createPool } from '../../db/pool';
import { findEventWorkflows } from '../../inbox/find-event-workflows';
import { listParkedEvents } from '../../inbox/list-parked-events';
import { pruneProcessedEvents } from '../../inbox/prune-processed-events';
import { TASK_QUEUES } from '../../config/constants';
import { connectTemporalClient, withCallDeadline } from '../../temporal/connect-client';
import { REDRIVE_PARKED_EVENTS_WORKFLOW, type RedriveParkedEventsWorkflow, type RedriveResult } from '../../../workflows/inbox/contract';
import { databaseUrl } from '../../config/resolve';

export function registerInboxCommands(program: Command) {
  const inbox = program.command('inbox').description('the consumer side: parked events and processed-id retention');

  inbox
    .command('parked')
    .description('list events the consumer could not apply, newest first, with their reason')
    .option('-n, --limit <n>', 'how many to show', '50')
    .option('--consumer <name>', 'only this inbox consumer (default: all)')
    .option('--json', 'one JSON object per line')
    .action(async (opts: { limit: string; consumer?: string; json?: boolean }) => {
      const config = loadConfig();
      const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 1 });
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
          const state = [
            r.redriven_at ? `redriven ${r.redriven_at.toISOString()}` : r.redrivable ? 'redrivable' : undefined,
            r.dead_letter_state ? `dead letter ${r.dead_letter_state}${r.dead_letter_error && r.dead_letter_state !== 'sent' ? ` (${r.dead_letter_error})` : ''}` : undefined,
          ].filter(Boolean);
          console.log(`#${r.id} ${r.parked_at.toISOString()}  ${where}  event=${r.event_id ?? '-'}  reason: ${r.reason}${state.length > 0 ? `\n    ${state.join('; ')}` : ''}\n    value: ${value}`);
        }
        console.log(`${rows.length} parked event(s) shown`);
      } finally {
        await pool.end();
      }
    });

  inbox
    .command('find')
    .description('the applyEventsWorkflow run(s) that carried an applied event: its topic, partition and offset from the inbox, the UI list query, the workflow ids')
    .requiredOption('--event-id <id>', 'the event id (payload.event_id)')
    .action(async (opts: { eventId: string }) => {
      const config = loadConfig();
      const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 1 });
      const { connection, client } = await connectTemporalClient(config);
      try {
        const found = await withCallDeadline(connection, config, () => findEventWorkflows(pool, client, opts.eventId));
        if (found.length === 0) {
          console.log(`event ${opts.eventId} is in no inbox with its Kafka position (not applied yet, parked: npx temporal-outbox inbox parked, or applied before the inbox recorded positions)`);
          process.exitCode = 1;
          return;
        }
        for (const f of found) {
          console.log(`event ${f.eventId}: applied by ${f.consumer} at ${f.appliedAt.toISOString()}; Kafka ${f.topic} partition ${f.partition}, offset ${f.offset}`);
          console.log(`  UI list query: ${f.query}`);
          console.log(`  ${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}/workflows?query=${encodeURIComponent(f.query)}`);
          for (const w of f.workflows) console.log(`  ${w.holdsEvent ? 'carried it:' : 'listed, not it:'} ${w.workflowId} (run ${w.runId})`);
          if (f.workflows.length === 0) console.log("  no applyEventsWorkflow run listed: runs are listed from Temporal's visibility, which can lag seconds behind on a cluster (ask again), and closed runs are kept for the namespace retention only");
        }
      } finally {
        await connection.close();
        await pool.end();
      }
    });

  inbox
    .command('redrive')
    .description('apply parked events again once their cause is fixed (e.g. the missing row now exists): through the inbox, so each is applied once however often redriven')
    .option('--id <ids...>', 'parked row ids (the first column of `inbox parked --json`: id)')
    .option('--all', 'every parked event of the consumer not yet redriven')
    .option('--consumer <name>', 'the inbox consumer (default: INBOX_CONSUMER)')
    .action(async (opts: { id?: string[]; all?: boolean; consumer?: string }) => {
      if (!opts.all === !opts.id) throw new Error('give --id <ids...> or --all');
      const ids = opts.id?.map((id) => {
        if (!/^[1-9][0-9]{0,18}$/.test(id)) throw new Error(`--id ${JSON.stringify(id)} is not a parked row id`);
        return id;
      });
      const config = loadConfig();
      const consumer = opts.consumer ?? config.consumer.inboxName;
      const taskQueue = config.consumer.taskQueue ?? TASK_QUEUES.consumer;
      const { connection, client } = await connectTemporalClient(config);
      const workflowId = `inbox-redrive-${consumer}-${Date.now()}`;
      try {
        // The consumer worker runs the redrive with its own handlers; without one polling the
        // queue, the deadline ends the wait (the workflow stays queued until a worker comes).
        const result: RedriveResult = await withCallDeadline(connection, config, () =>
          client.workflow.execute<RedriveParkedEventsWorkflow>(REDRIVE_PARKED_EVENTS_WORKFLOW, { taskQueue, workflowId, args: [{ consumer, ids }] }),
        ).catch((err: Error) => {
          throw new Error(`redrive ${workflowId} on task queue ${taskQueue} did not finish within ${config.temporal.callTimeoutMs} ms (is a consumer worker running?): ${err.message}`);
        });
        console.log(`redrive ${workflowId}: ${result.redriven.length} parked event(s) applied (${result.applied} credited now, ${result.duplicates} already applied before)`);
        if (result.redriven.length > 0) console.log(`  redriven: ${result.redriven.join(', ')}`);
        if (result.stillParked.length > 0) console.log(`  refused again, still parked (cause not fixed?): ${result.stillParked.join(', ')}`);
        for (const n of result.notRedrivable) console.log(`  not redrivable: ${n.id}: ${n.why}`);
        if (ids) {
          const found = new Set([...result.redriven, ...result.stillParked, ...result.notRedrivable.map((n) => n.id)]);
          const missing = ids.filter((id) => !found.has(id));
          if (missing.length > 0) console.log(`  not parked for ${consumer}, or already redriven: ${missing.join(', ')}`);
        }
        if (result.stillParked.length > 0 || result.notRedrivable.length > 0) process.exitCode = 1;
      } finally {
        await connection.close();
      }
    });

  inbox
    .command('prune')
    .description('forget processed event ids older than INBOX_RETENTION_MS, now (the retention schedule does this regularly)')
    .option('--batch-size <n>', 'rows per DELETE', '10000')
    .action(async (opts: { batchSize: string }) => {
      const config = loadConfig();
      const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 1 });
      try {
        const result = await pruneProcessedEvents(pool, { horizonMs: config.inbox.retentionMs, batchSize: Number(opts.batchSize), timeBudgetMs: config.retention.timeBudgetMs });
        console.log(JSON.stringify(result));
      } finally {
        await pool.end();
      }
    });
}

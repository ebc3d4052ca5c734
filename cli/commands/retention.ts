import { Client, Connection } from '@temporalio/client';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../../config/env';
import { ensureRetentionSchedule, retentionInput } from '../../retention/schedule';
import { temporalConnectionOptions } from '../../temporal/connection-options';

export function registerRetentionCommands(program: Command) {
  const retention = program.command('retention').description('the retention schedule that keeps the outbox and inbox small');

  retention
    .command('schedule')
    .description('create the retention Schedule, or update it to the current settings (safe to run again)')
    .action(async () => {
      const config = loadConfig();
      await withClient(config, async (client) => {
        const outcome = await ensureRetentionSchedule(client, config);
        console.log(`retention schedule ${config.retention.scheduleId} ${outcome}: every ${config.retention.interval}, overlap skip, task queue ${config.retention.taskQueue}`);
        console.log(`settings: ${JSON.stringify(retentionInput(config))}`);
        console.log(`runs need a retention worker: npm run worker:retention; watch them at ${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}/schedules/${config.retention.scheduleId}`);
      });
    });

  retention
    .command('trigger')
    .description('start one retention run now through the schedule (skipped if one is running)')
    .action(async () => {
      const config = loadConfig();
      await withClient(config, async (client) => {
        await client.schedule.getHandle(config.retention.scheduleId).trigger();
        console.log(`triggered ${config.retention.scheduleId}`);
      });
    });
}

async function withClient(config: Config, work: (client: Client) => Promise<void>) {
  const connection = await Connection.connect(temporalConnectionOptions(config));
  try {
    await work(new Client({ connection, namespace: config.temporal.namespace }));
  } finally {
    await connection.close();
  }
}

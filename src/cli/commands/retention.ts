import type { Command } from 'commander';
import { withTemporalClient } from '../../temporal/connect-client';
import { loadConfig } from '../../config/env';
import { ensureRetentionSchedule, retentionInput } from '../../retention/schedule';

export function registerRetentionCommands(program: Command) {
  const retention = program.command('retention').description('the retention schedule that keeps the outbox and inbox small');

  retention
    .command('schedule')
    .description('create the retention Schedule, or update it to the current settings (safe to run again)')
    .action(async () => {
      const config = loadConfig();
      await withTemporalClient(config, async (client) => {
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
      await withTemporalClient(config, async (client) => {
        await client.schedule.getHandle(config.retention.scheduleId).trigger();
        console.log(`triggered ${config.retention.scheduleId}`);
      });
    });
}

/** A client with a connect timeout; its calls end by TEMPORAL_CALL_TIMEOUT_MS (or `timeoutMs`). */

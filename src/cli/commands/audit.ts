import type { Command } from 'commander';
import { withTemporalClient } from '../../temporal/connect-client';
import { loadConfig } from '../../config/env';
import { driftLines, lastAuditRun } from '../../audit/last-run';
import { auditInput, ensureAuditSchedule } from '../../audit/schedule';
import { triggerAuditRun } from '../../audit/trigger-run';
import type { AuditReport } from '../../audit/types';

export function registerAuditCommands(program: Command) {
  const audit = program.command('audit').description('the scheduled reconciliation audit: every published event applied exactly once, balances add up');

  audit
    .command('schedule')
    .description('create the audit Schedule, or update it to the current settings (safe to run again)')
    .action(async () => {
      const config = loadConfig();
      await withTemporalClient(config, async (client) => {
        const outcome = await ensureAuditSchedule(client, config);
        console.log(`audit schedule ${config.audit.scheduleId} ${outcome}: every ${config.audit.interval}, task queue ${config.audit.taskQueue}`);
        console.log(`settings: ${JSON.stringify(auditInput(config))}`);
        console.log(`runs need a retention worker: npm run worker:retention; watch them at ${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}/schedules/${config.audit.scheduleId}`);
      });
    });

  audit
    .command('run')
    .description('trigger one audit run through the schedule, wait for it and print its findings; exits 1 on drift')
    .option('--json', 'the whole report as JSON')
    .action(async (o: { json?: boolean }) => {
      const config = loadConfig();
      await withTemporalClient(config, async (client) => {
        const { workflowId, report } = await triggerAuditRun(client, config.audit.scheduleId);
        print(report, workflowId, o.json);
        if (report.drift) process.exitCode = 1;
        // Waits for the run itself, whose window queries may each take up to the retention
        // worker's statement timeout: a deadline that long on top of the usual one.
      }, config.temporal.callTimeoutMs + config.retention.statementTimeoutMs);
    });

  audit
    .command('last')
    .description('the findings of the last finished audit run; exits 1 on drift')
    .option('--json', 'the whole report as JSON')
    .action(async (o: { json?: boolean }) => {
      const config = loadConfig();
      await withTemporalClient(config, async (client) => {
        const run = await lastAuditRun(client, config.audit.scheduleId);
        if (run === null) throw new Error(`there is no audit schedule ${config.audit.scheduleId}: npx temporal-outbox audit schedule`);
        if (run === undefined) return console.log('no audit run has finished yet');
        if (!run.report) {
          process.exitCode = 1;
          return console.log(`${run.workflowId}: ${run.status.toLowerCase()}: ${run.failure ?? ''}`);
        }
        print(run.report, run.workflowId, o.json);
        if (run.report.drift) process.exitCode = 1;
      });
    });
}

function print(r: AuditReport, workflowId: string, json?: boolean) {
  if (json) return console.log(JSON.stringify({ workflowId, ...r }, null, 2));
  console.log(`${workflowId}: events created ${r.window.from} → ${r.window.to}: ${r.outbox.events} events, ${r.outbox.published} published, ${r.outbox.pending} pending, ${r.outbox.parked.count} parked`);
  for (const c of r.consumers) console.log(`  ${c.consumer}: ${c.applied} of ${c.expected} applied exactly once, ${c.parked.count} parked with a reason`);
  for (const c of r.checks ?? []) console.log(`  ${c.description}: ${c.checked} checked, ${c.findings.count} found`);
  const lines = driftLines(r);
  console.log(lines.length ? `DRIFT:\n${lines.map((l) => `  - ${l}`).join('\n')}` : 'no drift');
}

/** A client with a connect timeout; its calls end by TEMPORAL_CALL_TIMEOUT_MS (or `timeoutMs`). */

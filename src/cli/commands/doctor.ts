import type { Command } from 'commander';
import { loadConfig } from '../../config/env';
import { formatReport } from '../../doctor/format-report';
import { runDoctor } from '../../doctor/run-doctor';

export function registerDoctorCommand(program: Command) {
  program
    .command('doctor')
    .description('outbox and inbox health: sizes, pending age, the poll plan, the retention schedule; exits 1 and names the fix when something is wrong')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { json?: boolean }) => {
      const report = await runDoctor(loadConfig());
      process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      process.exitCode = report.healthy ? 0 : 1;
    });
}

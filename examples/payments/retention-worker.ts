import { loadConfig, runRetentionWorker } from 'temporal-outbox';
import { withExampleSettings } from '../example-settings';
import { paymentsAuditChecks } from './audit-checks';

// The example's retention worker, as a service of its own would write one: the library's
// retention and audit, with the payments example's invariants (balances against the credit
// ledger) added to every audit run, which checks the example's inbox for its handlers' event types
// (examples/example-settings.ts). `npm run worker:retention` and the demo run it.

/**
 * Runs until SIGINT or SIGTERM (the first lets the running batch finish, a second exits at once);
 * exits non-zero on failure so a supervisor restarts it.
 */
export function main(): void {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(withExampleSettings(process.env));
  } catch (err) {
    process.stderr.write(`retention worker refused to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
  const controller = new AbortController();
  const stop = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  runRetentionWorker(config, { auditChecks: paymentsAuditChecks, signal: controller.signal, installTemporalRuntime: true }).then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`retention worker failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) main();

import { createAuditActivities } from '../activities/audit';
import { createRetentionActivities } from '../activities/retention';
import { exampleAuditChecks } from '../examples/handlers';
import type { AuditCheck } from '../src/audit/check';
import type { Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { createPool, databaseTimeouts } from '../src/db/pool';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { runWorkerMain } from './run-main';
import { createTemporalWorker, onShutdownSignal } from './temporal-worker';

// The retention worker: runs the retention workflow and its activities on the retention task
// queue. The Schedule starts the runs; this process only executes them. One is enough (runs are
// minutes apart and never overlap); a second one is a hot spare, not double deletion.
// It also runs the scheduled reconciliation audit (read-only; docs/audit.md), on the same queue
// unless AUDIT_TASK_QUEUE names another one (then run a second worker with RETENTION_TASK_QUEUE
// set to it).

export async function runRetentionWorker(config: Config, options: { auditChecks?: readonly AuditCheck[] } = {}): Promise<void> {
  const logger = createLogger('retention-worker', config.logLevel);
  const observability = await startWorkerObservability(config, 'retention', logger);
  // Two connections: one for the running batch, one for the catalog and probe queries beside it.
  const pool = createPool(config.database.workerUrls.retention, {
    schema: config.database.schema,
    max: 2,
    application_name: 'outbox-retention',
    ...databaseTimeouts(config),
    // Delete batches, table sizes and the audit's window queries scan far more than a hot-path
    // statement: RETENTION_STATEMENT_TIMEOUT_MS, not the general one.
    statement_timeout: config.retention.statementTimeoutMs,
  });
  try {
    const { worker, connection } = await createTemporalWorker(config, {
      taskQueue: config.retention.taskQueue,
      workflowsPath: require.resolve('../workflows/scheduled'),
      activities: { ...createRetentionActivities({ pool, config }), ...createAuditActivities({ pool, config, checks: options.auditChecks }) },
      // Runs never overlap (the Schedule skips), so a sweep and a catalog query at most: two
      // sweeps at once would only contend for the same pages and WAL.
      maxConcurrentActivityTaskExecutions: 2,
      traced: observability.tracing.exporting,
      ...observability.tracing.workerOptions,
    });
    onShutdownSignal(() => worker.shutdown());
    logger.info({ taskQueue: config.retention.taskQueue }, 'retention worker running');
    try {
      await worker.run();
    } finally {
      await connection.close();
    }
  } finally {
    await observability.close();
    await pool.end();
  }
}

if (require.main === module) runWorkerMain('retention worker', (config) => runRetentionWorker(config, { auditChecks: exampleAuditChecks(config) }));

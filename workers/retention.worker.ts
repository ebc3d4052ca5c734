import { createAuditActivities } from '../activities/audit';
import { createRetentionActivities } from '../activities/retention';
import type { AuditCheck } from '../src/audit/check';
import { workerDatabaseUrl, type Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { createPool, databaseTimeouts } from '../src/db/pool';
import { createKafka } from '../src/kafka/client';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { runWorkerMain } from './run-main';
import { createTemporalWorker } from './temporal-worker';
import { onAbort, type WorkerOptions } from './worker-options';

// The retention worker: runs the retention workflow and its activities on the retention task
// queue. The Schedule starts the runs; this process only executes them. One is enough (runs are
// minutes apart and never overlap); a second one is a hot spare, not double deletion.
// It also runs the scheduled reconciliation audit (read-only; docs/audit.md), on the same queue
// unless audit.taskQueue names another one (then run a second worker with retention.taskQueue
// set to it).

export interface RetentionWorkerOptions extends WorkerOptions {
  /** A service's own invariants, proved by every audit run beside the library's delivery proof (docs/audit.md). */
  auditChecks?: readonly AuditCheck[];
}

/**
 * Runs one retention worker until `signal` aborts. A pool given should allow statements as long
 * as retention.statementTimeoutMs: its delete batches and the audit's window queries scan far
 * more than a hot-path statement.
 */
export async function runRetentionWorker(config: Config, options: RetentionWorkerOptions = {}): Promise<void> {
  const logger = options.logger ?? createLogger('retention-worker', config.logLevel);
  const observability = await startWorkerObservability(config, 'retention', logger, options);
  // Two connections: one for the running batch, one for the catalog and probe queries beside it.
  const pool =
    options.pool ??
    createPool(workerDatabaseUrl(config, 'retention'), {
      schema: config.database.schema,
      max: 2,
      application_name: 'outbox-retention',
      ...databaseTimeouts(config),
      statement_timeout: config.retention.statementTimeoutMs,
    });
  try {
    const { worker, close } = await createTemporalWorker(
      config,
      {
        taskQueue: config.retention.taskQueue,
        workflowsPath: require.resolve('../workflows/scheduled'),
        activities: {
          ...createRetentionActivities({ pool, config }),
          // Kafka only for the audit's read of its topics (no connection until a run reads them).
          ...createAuditActivities({ pool, config, checks: options.auditChecks, ...(config.audit.readTopics ? { kafka: createKafka(config, 'outbox-audit', logger) } : {}) }),
        },
        // Runs never overlap (the Schedule skips), so a sweep and a catalog query at most: two
        // sweeps at once would only contend for the same pages and WAL.
        maxConcurrentActivityTaskExecutions: 2,
        traced: observability.tracing.exporting,
        ...observability.tracing.workerOptions,
      },
      options.connection,
    );
    // Running first: a signal that has already aborted then stops a running worker.
    const running = worker.run();
    onAbort(options.signal, () => worker.shutdown());
    logger.info({ taskQueue: config.retention.taskQueue }, 'retention worker running');
    try {
      await running;
    } finally {
      await close();
    }
  } finally {
    await observability.close();
    if (!options.pool) await pool.end();
  }
}

if (require.main === module) runWorkerMain('retention worker', runRetentionWorker);

import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import { createAuditActivities } from '../../activities/audit';
import { createRetentionActivities } from '../../activities/retention';
import { paymentsAuditChecks } from '../../examples/payments/audit-checks';
import { workerDatabaseUrl, type Config } from '../../src/config/env';
import { createPool } from '../../src/db/pool';
import { createKafka } from '../../src/kafka/client';
import { temporalConnectionOptions } from '../../src/temporal/connection-options';
import { componentDatabaseUrl } from './database';

const quietBundlerLogger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

/**
 * An in-process worker for the scheduled workflows (retention + audit), as the retention
 * worker runs them, on the config's audit task queue, with the payments example's checks.
 */
export async function startAuditWorker(config: Config): Promise<{ close(): Promise<void> }> {
  // Under the retention worker's role, as the retention worker runs the audit.
  const pool = createPool(componentDatabaseUrl({ DATABASE_URL: config.database.url }, 'retention') ?? workerDatabaseUrl(config, 'retention'), { schema: config.database.schema, max: 3 });
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const worker = await Worker.create({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.audit.taskQueue,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows/scheduled'), logger: quietBundlerLogger }),
    activities: { ...createRetentionActivities({ pool, config }), ...createAuditActivities({ pool, config, checks: paymentsAuditChecks, kafka: createKafka(config, 'test-audit') }) },
    shutdownGraceTime: '2 seconds',
  });
  const running = worker.run();
  return {
    async close() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}

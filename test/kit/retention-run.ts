import { NativeConnection, Worker } from '@temporalio/worker';
import type { Pool } from 'pg';
import { createRetentionActivities } from '../../activities/retention';
import type { Config } from '../../src/config/env';
import { RETENTION_WORKFLOW, type RetentionInput, type RetentionReport, type RetentionWorkflow } from '../../workflows/retention/contract';
import { uniqueName } from './ids';
import { testTemporalClient } from './temporal';

/**
 * One retention run on the production workflow and activities, on a worker of the test's own
 * (its own task queue) against the test's database: what a scheduled run does, started by hand.
 */
export async function runRetentionOnce(config: Config, pool: Pool, input: RetentionInput, name = 'retention-run'): Promise<RetentionReport> {
  const taskQueue = uniqueName(name);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const { client, connection: clientConnection } = await testTemporalClient();
  try {
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowsPath: require.resolve('../../workflows/retention/retention'),
      activities: createRetentionActivities({ pool, config }),
    });
    return await worker.runUntil(client.workflow.execute<RetentionWorkflow>(RETENTION_WORKFLOW, { taskQueue, workflowId: uniqueName(name), args: [input] }));
  } finally {
    await clientConnection.close();
    await connection.close();
  }
}

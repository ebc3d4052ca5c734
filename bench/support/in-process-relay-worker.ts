import { bundleWorkflowCode, NativeConnection } from '@temporalio/worker';
import { PendingListener, PendingScanBounds, type RelayActivities } from '../../activities/relay';
import type { Config } from '../../config/env';
import { createPool } from '../../db/pool';
import { createKafka } from '../../kafka/client';
import { createRelayWorkerSet } from '../../workers/relay-worker-set';

export interface InProcessRelayWorker {
  /** The very activities the worker runs (their bounds included), for timing the relay's own poll. */
  activities: RelayActivities;
  /** The bounds those activities poll from, per shard. */
  bounds: PendingScanBounds;
  close(): Promise<void>;
}

/**
 * A relay worker inside the benchmark's process, on config.relay.taskQueue, so the benchmark can
 * call the relay's fetch activity itself and time exactly what the relay's poll costs.
 */
export async function startInProcessRelayWorker(config: Config): Promise<InProcessRelayWorker> {
  const pool = createPool(config.database.url, { max: 10, application_name: 'bench-relay-worker' });
  const listener = new PendingListener(config.database.url);
  const producer = createKafka(config, 'bench-relay-worker').producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const bounds = new PendingScanBounds(config.relay.fullScanIntervalMs);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  const workers = await createRelayWorkerSet({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.relay.taskQueue!,
    workflowBundle: await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows/relay-workflows'), logger: quiet }),
    deps: { pool, producer, config, listener },
    bounds,
    shutdownGraceTime: '2 seconds',
  });
  const running = workers.run();
  return {
    activities: workers.activities,
    bounds,
    async close() {
      await workers.shutdown();
      await running.catch(() => undefined);
      await connection.close().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
      await listener.close();
      await pool.end().catch(() => undefined);
    },
  };
}

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

import { Client } from '@temporalio/client';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { createInboxActivities } from '../../activities/inbox';
import type { WorkerTracing } from '../../src/observability/tracing';
import { createTemporalWorker } from '../temporal-worker';
import type { ConsumerDeps } from './deps';

export interface ConsumerTemporalSide {
  worker: Worker;
  /** Starts applyEventsWorkflow runs, on the worker's own connection. */
  client: Client;
  /** The worker's run, started at once; awaited by the caller. */
  running: Promise<void>;
  /** Shuts the worker down if it runs (it drains its activities first). */
  stop(): void;
  /** Closes the connection unless it was the service's. */
  close(): Promise<void>;
}

/**
 * The consumer's Temporal worker (its applyEventsWorkflow runs and their activities: the
 * handlers, each in the inbox guard), running before the Kafka consumer starts: eagerly started
 * workflows land on it at once.
 */
export async function startConsumerTemporalSide(deps: ConsumerDeps, tracing: WorkerTracing, connection?: NativeConnection): Promise<ConsumerTemporalSide> {
  const partitions = deps.config.kafka.partitions;
  const created = await createTemporalWorker(
    deps.config,
    {
      taskQueue: deps.taskQueue,
      workflowsPath: require.resolve('../../workflows/inbox'),
      activities: createInboxActivities({ pool: deps.pool, handlers: deps.handlers, inFlight: deps.inFlight, consumerGroup: deps.config.kafka.consumerGroup }),
      maxConcurrentActivityTaskExecutions: partitions + 4,
      traced: tracing.exporting,
      ...tracing.workerOptions,
    },
    connection,
  );
  const { worker } = created;
  const running = worker.run();
  // Awaited by the caller; this only keeps an early failure from counting as unhandled meanwhile.
  running.catch(() => undefined);
  return {
    worker,
    // The client shares the worker's native connection, which is what lets the server hand a
    // new workflow's first task straight back to this worker (eager start): one round trip less.
    client: new Client({ connection: created.connection, namespace: deps.config.temporal.namespace, interceptors: tracing.clientInterceptors }),
    running,
    stop: () => {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    },
    close: created.close,
  };
}

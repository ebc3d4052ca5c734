import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Producer } from 'kafkajs';
import { createRelayActivities, PendingListener, type RelayActivities } from '../activities/relay';
import { TASK_QUEUES } from '../config/constants';
import type { Config } from '../config/env';
import { createLogger } from '../config/logger';
import { createPool, databaseTimeouts } from '../db/pool';
import { createKafka } from '../kafka/client';
import { createRelayProducer } from '../kafka/relay-producer';
import { ensureTopics, eventTopics } from '../kafka/topics';
import { startRelaySamplers } from '../observability/relay-samplers';
import { startWorkerObservability } from '../observability/worker-observability';
import { startMemoryLog } from './memory-log';
import { runWorkerMain } from './run-main';
import { createTemporalWorker, onShutdownSignal } from './temporal-worker';

// One relay worker process: runs relay shard workflows and their activities. Any number of
// these may run; Temporal hands each shard's tasks to one of them at a time, so adding a
// process adds capacity and never double-processes a shard.

export interface RelayWorkerOptions {
  /** Stops the worker like SIGTERM does (in-flight activities finish, then it returns). */
  signal?: AbortSignal;
  /** Your own OpenTelemetry span processor (else OTLP from OTEL_EXPORTER_OTLP_ENDPOINT, else none): docs/observability.md. */
  spanProcessor?: SpanProcessor;
  /**
   * Wraps the activities before the worker registers them (activities are plain functions): how
   * instrumentation, or a test fixture's fault injection, gets in without touching the relay.
   */
  wrapActivities?: (activities: RelayActivities) => RelayActivities;
}

export async function runRelayWorker(config: Config, options: RelayWorkerOptions = {}): Promise<void> {
  const logger = createLogger('relay-worker', config.logLevel);
  const taskQueue = config.relay.taskQueue ?? TASK_QUEUES.relay;
  const observability = await startWorkerObservability(config, 'relay', logger, { spanProcessor: options.spanProcessor });
  const pool = createPool(config.database.workerUrls.relay, { max: 10, ...databaseTimeouts(config) });
  const listener = new PendingListener(config.database.workerUrls.relay);
  const kafka = createKafka(config, `outbox-relay-${process.pid}`);
  // Not idempotent, and no retries inside kafkajs: kafka/relay-producer.ts says why.
  const producer: Producer = createRelayProducer(kafka);
  let connectionToClose: { close(): Promise<void> } | undefined;
  const samplers = config.metrics.portBase !== undefined ? startRelaySamplers(pool, config, logger) : undefined;
  try {
    await ensureTopics(kafka, config, eventTopics(config.kafka));
    await producer.connect();
    const { worker, connection } = await createTemporalWorker(config, {
      taskQueue,
      workflowsPath: require.resolve('../workflows/relay-workflows'),
      activities: (options.wrapActivities ?? ((a) => a))(createRelayActivities({ pool, producer, config, listener })),
      // Let an in-flight batch finish on SIGTERM (its send and mark take well under this).
      shutdownGraceTime: '10 seconds',
      ...observability.tracing.workerOptions,
    });
    connectionToClose = connection;
    const stop = () => {
      logger.info('stopping: finishing in-flight activities');
      if (worker.getState() === 'RUNNING') worker.shutdown();
    };
    if (options.signal) {
      if (options.signal.aborted) stop();
      else options.signal.addEventListener('abort', stop, { once: true });
    } else {
      onShutdownSignal(stop);
    }
    logger.info({ pid: process.pid, taskQueue, topic: config.kafka.topic }, 'relay worker running');
    startMemoryLog(logger, config.relay.memoryLogMs);
    await worker.run();
  } finally {
    await samplers?.stop();
    await observability.close();
    await connectionToClose?.close().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await listener.close();
    await pool.end().catch(() => undefined);
  }
}

if (require.main === module) runWorkerMain('relay worker', (config) => runRelayWorker(config));

import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Producer } from 'kafkajs';
import { NativeConnection } from '@temporalio/worker';
import { PendingListener, type RelayActivities } from '../activities/relay';
import { TASK_QUEUES } from '../src/config/constants';
import type { Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { createPool, databaseTimeouts, endPool } from '../src/db/pool';
import { createKafka } from '../src/kafka/client';
import { createRelayProducer } from '../src/kafka/relay-producer';
import { ensureTopics, eventTopics } from '../src/kafka/topics';
import { startRelaySamplers } from '../src/observability/relay-samplers';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { startMemoryLog } from './memory-log';
import { kafkaProbe, postgresProbe } from './link-health';
import { runWorkerMain } from './run-main';
import { runSteppingAside } from './step-aside';
import { createRelayWorkerSet } from './relay-worker-set';
import { temporalConnectionOptions } from '../src/temporal/connection-options';
import { onShutdownSignal, workflowCode } from './temporal-worker';

// One relay worker process: runs relay shard workflows, and the relay sessions of the shards
// placed on it. Any number of these may run: each registers in outbox_relay_workers, the shards
// spread over the live ones (docs/relay.md, "Where shards run"), so adding a process adds
// capacity, and a shard's advisory lock keeps two sessions of one shard from relaying at once.

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
  const pool = createPool(config.database.workerUrls.relay, { schema: config.database.schema, max: 10, ...databaseTimeouts(config) });
  const listener = new PendingListener(config.database.workerUrls.relay, config.links.database);
  const kafka = createKafka(config, `outbox-relay-${process.pid}`);
  // Not idempotent, and no retries inside kafkajs: src/kafka/relay-producer.ts says why.
  const producer: Producer = createRelayProducer(kafka);
  let connectionToClose: { close(): Promise<void> } | undefined;
  const samplers = config.metrics.portBase !== undefined ? startRelaySamplers(pool, config, logger) : undefined;
  try {
    await ensureTopics(kafka, config, eventTopics(config.kafka));
    await producer.connect();
    const code = await workflowCode(config, require.resolve('../workflows/relay'), observability.tracing.exporting);
    const connection = await NativeConnection.connect(temporalConnectionOptions(config));
    connectionToClose = connection;
    const admin = kafka.admin();
    await admin.connect();
    const stopped = new AbortController();
    if (options.signal) {
      if (options.signal.aborted) stopped.abort();
      else options.signal.addEventListener('abort', () => stopped.abort(), { once: true });
    } else {
      onShutdownSignal(() => stopped.abort());
    }
    stopped.signal.addEventListener('abort', () => logger.info('stopping: leaving the relay workers, finishing in-flight batches'), { once: true });
    try {
      // A worker that cannot reach PostgreSQL or Kafka leaves the relay workers and stops taking
      // Temporal tasks until both answer again (workers/step-aside.ts); its shards move meanwhile.
      await runSteppingAside({
        start: () =>
          createRelayWorkerSet({
            connection,
            namespace: config.temporal.namespace,
            taskQueue,
            workflowBundle: { code },
            deps: { pool, producer, config, listener },
            wrapActivities: options.wrapActivities,
            // Let an in-flight batch finish on SIGTERM (its send and mark take well under this).
            shutdownGraceTime: '10 seconds',
            workerOptions: observability.tracing.workerOptions,
          }),
        onStarted: (workers, first) => {
          logger.info(
            { pid: process.pid, taskQueue, workerId: workers.registry.workerId, ownTaskQueue: workers.registry.taskQueue, topic: config.kafka.topic },
            first ? 'relay worker running' : 'relay worker rejoined',
          );
          if (first) startMemoryLog(logger, config.relay.memoryLogMs);
        },
        probes: {
          postgres: postgresProbe(config.database.workerUrls.relay, config.links.health.timeoutMs),
          kafka: kafkaProbe(admin, config.kafka.topic),
        },
        health: config.links.health,
        logger,
        stopped: stopped.signal,
      });
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  } finally {
    await samplers?.stop();
    await observability.close();
    await connectionToClose?.close().catch(() => undefined);
    await producer.disconnect().catch(() => undefined);
    await Promise.race([listener.close(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    await endPool(pool);
  }
}

if (require.main === module) runWorkerMain('relay worker', (config) => runRelayWorker(config));

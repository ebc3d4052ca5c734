import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TASK_QUEUES } from '../src/config/constants';
import type { Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { createPool, databaseTimeouts, endPool } from '../src/db/pool';
import { InFlightBatches } from '../src/inbox/batch-hand-off';
import { HandlerRegistry, type AnyEventHandler } from '../src/inbox/handler';
import { createKafka } from '../src/kafka/client';
import { assertRedeliveryHorizon } from '../src/kafka/guard-redelivery-horizon';
import { ensureTopics, topicsForEventTypes } from '../src/kafka/topics';
import { exampleHandlers } from '../examples/handlers';
import { startConsumerSamplers } from '../src/observability/consumer-samplers';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { startConsumerMembership } from './consumer-membership';
import { kafkaProbe, postgresProbe } from './link-health';
import { runWorkerMain } from './run-main';
import { runSteppingAside } from './step-aside';
import { onShutdownSignal } from './temporal-worker';

// One consumer process: a member of the Kafka consumer group that turns batches into
// applyEventsWorkflow runs, and a Temporal worker that executes those workflows' activities
// (the registered handlers, each wrapped in the inbox guard). Start more processes to consume
// more partitions in parallel (up to the partition count).

export interface ConsumerWorkerOptions {
  /** One handler per event type (defineHandler); the consumer subscribes to their types' topics. */
  handlers: readonly AnyEventHandler[];
  /** Stops the worker like SIGTERM does (leave the group, drain, return). */
  signal?: AbortSignal;
  /** Your own OpenTelemetry span processor (else OTLP from OTEL_EXPORTER_OTLP_ENDPOINT, else none): docs/observability.md. */
  spanProcessor?: SpanProcessor;
}

/**
 * Runs one consumer worker until it is stopped (SIGINT/SIGTERM or `signal`). The consumer's
 * inbox identity is INBOX_CONSUMER and its Kafka group CONSUMER_GROUP; give each consumer of
 * the same events its own pair (and its own CONSUMER_TASK_QUEUE when the handler sets differ).
 */
export async function runConsumerWorker(config: Config, options: ConsumerWorkerOptions): Promise<void> {
  const handlers = new HandlerRegistry(options.handlers);
  const topics = topicsForEventTypes(config.kafka, handlers.eventTypes());
  const logger = createLogger('consumer', config.logLevel);
  const taskQueue = config.consumer.taskQueue ?? TASK_QUEUES.consumer;
  const observability = await startWorkerObservability(config, 'consumer', logger, { spanProcessor: options.spanProcessor });
  const partitions = config.kafka.partitions;
  // Every partition this process owns may have a batch in flight at once.
  const pool = createPool(config.database.workerUrls.consumer, { schema: config.database.schema, max: Math.min(20, partitions + 4), ...databaseTimeouts(config) });
  const kafka = createKafka(config, `credit-consumer-${process.pid}`);
  // Batches this process started, for their activities (normally run here too) to take from memory.
  const inFlight = new InFlightBatches();
  const samplers = config.metrics.portBase !== undefined ? startConsumerSamplers(pool, config, logger) : undefined;
  await ensureTopics(kafka, config);
  // The inbox forgets ids after INBOX_RETENTION_MS: refuse to consume a topic that can redeliver
  // for longer (its real retention on the broker, not what the environment says). Checked
  // before anything else starts, so the refusal is immediate and says why.
  await assertRedeliveryHorizon(kafka, config, topics);
  const admin = kafka.admin();
  const stopped = new AbortController();
  if (options.signal) {
    if (options.signal.aborted) stopped.abort();
    else options.signal.addEventListener('abort', () => stopped.abort(), { once: true });
  } else {
    onShutdownSignal(() => stopped.abort());
  }
  try {
    await admin.connect();
    // A consumer that cannot reach PostgreSQL or Kafka leaves the group and stops taking Temporal
    // tasks until both answer again (workers/step-aside.ts): its partitions go to the others.
    await runSteppingAside({
      start: () => startConsumerMembership({ config, logger, pool, kafka, handlers, topics, taskQueue, inFlight, observability }),
      onStarted: (_membership, first) =>
        logger.info(
          { pid: process.pid, topics, eventTypes: handlers.eventTypes(), consumer: config.consumer.inboxName, group: config.kafka.consumerGroup, taskQueue },
          first ? 'consumer worker running' : 'consumer worker rejoined',
        ),
      probes: {
        postgres: postgresProbe(config.database.workerUrls.consumer, config.links.health.timeoutMs),
        kafka: kafkaProbe(admin, topics[0]!),
      },
      // Another member of the group to hand the partitions to (a consumer alone keeps them, and
      // heartbeats through the outage, applying what it holds once the link is back).
      othersCanTakeOver: async () => {
        const [group] = (await admin.describeGroups([config.kafka.consumerGroup])).groups;
        return (group?.members.length ?? 0) > 1;
      },
      health: config.links.health,
      logger,
      stopped: stopped.signal,
    });
  } finally {
    samplers?.stop();
    await observability.close();
    await admin.disconnect().catch(() => undefined);
    await endPool(pool);
  }
}

if (require.main === module) runWorkerMain('consumer worker', (config) => runConsumerWorker(config, { handlers: exampleHandlers(config) }));

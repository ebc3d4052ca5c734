import { setTimeout as sleep } from 'node:timers/promises';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import type { Consumer, Producer } from 'kafkajs';
import { createInboxActivities } from '../activities/inbox';
import { TASK_QUEUES } from '../src/config/constants';
import type { Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { createPool, databaseTimeouts } from '../src/db/pool';
import { InFlightBatches } from '../src/inbox/batch-hand-off';
import { applyWorkflowRunner, createBatchHandler } from '../src/inbox/consume-batch';
import { startDeadLetterSweep } from '../src/inbox/dead-letter-sweep';
import type { DeadLetterTarget } from '../src/inbox/deliver-dead-letters';
import { EventCoalescer } from '../src/inbox/event-coalescer';
import { PartitionSequence } from '../src/inbox/partition-sequence';
import { HandlerRegistry, type AnyEventHandler } from '../src/inbox/handler';
import { createKafka } from '../src/kafka/client';
import { createDeadLetterProducer } from '../src/kafka/dead-letter-producer';
import { assertRedeliveryHorizon, watchRedeliveryHorizon, type RedeliveryHorizonError } from '../src/kafka/guard-redelivery-horizon';
import { ensureTopics, topicsForEventTypes } from '../src/kafka/topics';
import { exampleHandlers } from '../examples/handlers';
import { recordCommittedLag, startConsumerSamplers, withLagMetrics } from '../src/observability/consumer-samplers';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { runWorkerMain } from './run-main';
import { createTemporalWorker, onShutdownSignal } from './temporal-worker';

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
  let consumer: Consumer | undefined;
  let producer: Producer | undefined;
  let stopWatching: (() => void) | undefined;
  let stopDeadLetterSweep: (() => void) | undefined;
  // Batches this process started, for their activities (normally run here too) to take from memory.
  const inFlight = new InFlightBatches();
  const samplers = config.metrics.portBase !== undefined ? startConsumerSamplers(pool, config, logger) : undefined;
  await ensureTopics(kafka, config);
  // The inbox forgets ids after INBOX_RETENTION_MS: refuse to consume a topic that can redeliver
  // for longer (its real retention on the broker, not what the environment says). Checked
  // before anything else starts, so the refusal is immediate and says why.
  await assertRedeliveryHorizon(kafka, config, topics);
  const { worker, connection } = await createTemporalWorker(config, {
    taskQueue,
    workflowsPath: require.resolve('../workflows/inbox'),
    activities: createInboxActivities({ pool, handlers, inFlight }),
    maxConcurrentActivityTaskExecutions: partitions + 4,
    traced: observability.tracing.exporting,
    ...observability.tracing.workerOptions,
  });
  // Running before the consumer starts: eagerly started workflows land on this worker at once.
  const running = worker.run();
  // Awaited below; this only keeps an early failure from counting as unhandled meanwhile.
  running.catch(() => undefined);
  const stopWorker = () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  try {
    // The client shares the worker's native connection, which is what lets the server hand a
    // new workflow's first task straight back to this worker (eager start): one round trip less.
    const client = new Client({ connection, namespace: config.temporal.namespace, interceptors: observability.tracing.clientInterceptors });
    let deadLetter: DeadLetterTarget | undefined;
    if (config.consumer.deadLetter) {
      producer = createDeadLetterProducer(kafka);
      await producer.connect();
      deadLetter = { producer, topic: config.kafka.deadLetterTopic, retryMs: config.consumer.deadLetterRetryMs, maxAttempts: config.consumer.deadLetterMaxAttempts };
      stopDeadLetterSweep = startDeadLetterSweep(pool, deadLetter, config.consumer.inboxName, logger);
    }
    consumer = kafka.consumer({
      groupId: config.kafka.consumerGroup,
      sessionTimeout: config.consumer.sessionTimeoutMs,
      rebalanceTimeout: config.consumer.rebalanceTimeoutMs,
      heartbeatInterval: Math.floor(config.consumer.sessionTimeoutMs / 4),
      // Not kafkajs' default 1 MB per partition / 10 MB per fetch: a fetch is decoded whole and
      // held until it is handled, and the worker has a memory budget (src/config/env.ts).
      maxBytesPerPartition: config.consumer.fetchMaxPartitionBytes,
      maxBytes: config.consumer.fetchMaxBytes,
      maxWaitTimeInMs: config.consumer.fetchMaxWaitMs,
    });
    // Each join is a new generation: chunks handed out before it are neither retried nor
    // committed by this process any more (src/inbox/consume-batch.ts).
    let generation = 0;
    consumer.on(consumer.events.GROUP_JOIN, (e) => {
      generation += 1;
      logger.info({ pid: process.pid, memberId: e.payload.memberId, assignment: e.payload.memberAssignment }, 'joined consumer group');
    });
    let consumerDead = false;
    consumer.on(consumer.events.CRASH, (e) => {
      logger.error({ err: e.payload.error?.message, restart: e.payload.restart }, 'kafka consumer crashed');
      // kafkajs gave up on the group: a process that only runs Temporal tasks would look alive
      // while consuming nothing. Exit non-zero so the supervisor restarts the whole worker.
      if (!e.payload.restart) {
        consumerDead = true;
        stopWorker();
      }
    });
    await consumer.connect();
    // A new group starts at the earliest offset: a replay of everything is safe (the inbox
    // drops repeats), skipping events is not.
    await consumer.subscribe({ topics, fromBeginning: true });

    const coalescer = new EventCoalescer(applyWorkflowRunner(client, taskQueue, inFlight), {
      consumer: config.consumer.inboxName,
      group: config.kafka.consumerGroup,
      maxEvents: config.consumer.batchSize,
      maxBytes: config.consumer.batchMaxBytes,
      maxInFlight: config.consumer.maxInFlight,
      windowMs: config.consumer.coalesceWindowMs,
      onFlight: (r) => logger.info({ pid: process.pid, ...r }, 'batch applied'),
    });
    const sequence = new PartitionSequence();
    let stopping = false;
    const eachBatch = createBatchHandler(
      {
        pool,
        coalescer,
        handlers,
        unknownEventTypes: config.consumer.unknownEventTypes,
        deadLetter,
        logger,
        inboxName: config.consumer.inboxName,
        batchSize: config.consumer.batchSize,
        batchMaxBytes: config.consumer.batchMaxBytes,
        fetchAheadMinEvents: config.consumer.fetchAheadMinEvents,
        sequence,
        generation: () => generation,
        stopping: () => stopping,
      },
      (chunk) => {
        recordCommittedLag(chunk);
        logger.debug({ pid: process.pid, ...chunk }, 'chunk committed');
      },
    );
    await consumer.run({
      // The batch handler moves the fetch position itself (resolveOffset, when a chunk is handed
      // out) and commits each chunk's offset itself, once the chunk is applied: kafkajs must
      // never commit a resolved offset on its own.
      eachBatchAutoResolve: false,
      autoCommit: false,
      partitionsConsumedConcurrently: partitions,
      eachBatch: withLagMetrics(eachBatch),
    });

    let horizonBroken: RedeliveryHorizonError | undefined;
    stopWatching = watchRedeliveryHorizon(kafka, config, topics, config.kafka.retentionCheckMs, (err) => {
      logger.error({ err: err.message }, 'the topic can now redeliver events the inbox will have forgotten: stopping');
      horizonBroken = err;
      void consumer!.disconnect().finally(stopWorker);
    });
    const stop = () => {
      logger.info('stopping: finishing the chunks being applied, leaving the consumer group, then draining the Temporal worker');
      // In this order: nothing new is fetched or started; the chunks being applied finish (on
      // this worker) and are committed while we are still in the group, so the next owner does
      // not get them again; then the group, then the worker.
      stopping = true;
      try {
        consumer!.pause(topics.map((topic) => ({ topic })));
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'could not pause the consumer before stopping');
      }
      // Not for ever: PostgreSQL may be down (an unreferenced timer does not hold the process).
      void Promise.race([sequence.drain(), sleep(config.consumer.rebalanceTimeoutMs, undefined, { ref: false })])
        .then(() => consumer!.disconnect())
        .finally(stopWorker);
    };
    if (options.signal) {
      if (options.signal.aborted) stop();
      else options.signal.addEventListener('abort', stop, { once: true });
    } else {
      onShutdownSignal(stop);
    }
    logger.info({ pid: process.pid, topics, eventTypes: handlers.eventTypes(), consumer: config.consumer.inboxName, group: config.kafka.consumerGroup, taskQueue }, 'consumer worker running');
    await running;
    if (horizonBroken) throw horizonBroken;
    if (consumerDead) throw new Error('the Kafka consumer stopped for good; exiting so the worker is restarted');
  } catch (err) {
    stopWorker();
    await running.catch(() => undefined);
    throw err;
  } finally {
    stopWatching?.();
    stopDeadLetterSweep?.();
    samplers?.stop();
    await observability.close();
    await consumer?.disconnect().catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
    await connection.close().catch(() => undefined);
    await pool.end().catch(() => undefined);
  }
}

if (require.main === module) runWorkerMain('consumer worker', (config) => runConsumerWorker(config, { handlers: exampleHandlers(config) }));

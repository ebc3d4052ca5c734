import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@temporalio/client';
import type { Consumer, Kafka, Producer } from 'kafkajs';
import type { Pool } from 'pg';
import { createInboxActivities } from '../activities/inbox';
import type { Config } from '../src/config/env';
import type { Logger } from '../src/config/logger';
import type { InFlightBatches } from '../src/inbox/batch-hand-off';
import { applyWorkflowRunner, createBatchHandler } from '../src/inbox/consume-batch';
import { startDeadLetterSweep } from '../src/inbox/dead-letter-sweep';
import type { DeadLetterTarget } from '../src/inbox/deliver-dead-letters';
import { EventCoalescer } from '../src/inbox/event-coalescer';
import type { HandlerRegistry } from '../src/inbox/handler';
import { PartitionSequence } from '../src/inbox/partition-sequence';
import { createDeadLetterProducer } from '../src/kafka/dead-letter-producer';
import { watchRedeliveryHorizon, type RedeliveryHorizonError } from '../src/kafka/guard-redelivery-horizon';
import { recordCommittedLag, withLagMetrics } from '../src/observability/consumer-samplers';
import type { startWorkerObservability } from '../src/observability/worker-observability';
import type { SteppableWork } from './step-aside';
import { createTemporalWorker } from './temporal-worker';

// How long a consumer stepping aside waits for its Temporal worker to drain before it is ready to
// rejoin: the drain waits on activities stuck on the dead link until their query timeout.
const STEP_ASIDE_DRAIN_MS = 15_000;

export interface ConsumerMembershipParts {
  config: Config;
  logger: Logger;
  pool: Pool;
  kafka: Kafka;
  handlers: HandlerRegistry;
  topics: string[];
  taskQueue: string;
  inFlight: InFlightBatches;
  observability: Pick<Awaited<ReturnType<typeof startWorkerObservability>>, 'tracing'>;
}

/**
 * One membership of the consumer: its Temporal worker (which runs the apply workflows'
 * activities), its Kafka consumer in the group, and the dead-letter sweep, started together and
 * ended together. A consumer worker runs one at a time, and a new one after each heal
 * (workers/step-aside.ts). `shutdown` finishes the chunks being applied (not when stepping aside:
 * they cannot finish without the link), leaves the group, then drains the Temporal worker;
 * `run` resolves once all of it is over.
 */
export async function startConsumerMembership(parts: ConsumerMembershipParts): Promise<SteppableWork> {
  const { config, logger, pool, kafka, handlers, topics, taskQueue, inFlight, observability } = parts;
  const partitions = config.kafka.partitions;
  let consumer: Consumer | undefined;
  let producer: Producer | undefined;
  let stopWatching: (() => void) | undefined;
  let stopDeadLetterSweep: (() => void) | undefined;
  const abandon = new AbortController();
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
        abandon: abandon.signal,
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
    let stopped: Promise<void> | undefined;
    const shutdown = (stepAside = false) => {
      stopped ??= (async () => {
        logger.info(stepAside ? 'stepping aside: leaving the consumer group, then draining the Temporal worker' : 'stopping: finishing the chunks being applied, leaving the consumer group, then draining the Temporal worker');
        // In this order: nothing new is fetched or started; the chunks being applied finish (on
        // this worker) and are committed while we are still in the group, so the next owner does
        // not get them again; then the group, then the worker. A worker stepping aside cannot
        // finish them (its link is down): the next owner applies them again, the inbox absorbing
        // whatever did commit.
        stopping = true;
        if (stepAside) abandon.abort();
        try {
          consumer!.pause(topics.map((topic) => ({ topic })));
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'could not pause the consumer before stopping');
        }
        // Not for ever: PostgreSQL may be down (an unreferenced timer does not hold the process).
        if (!stepAside) await Promise.race([sequence.drain(), sleep(config.consumer.rebalanceTimeoutMs, undefined, { ref: false })]);
        await Promise.race([consumer!.disconnect().catch(() => undefined), sleep(config.consumer.rebalanceTimeoutMs, undefined, { ref: false })]);
        stopWorker();
      })();
      return stopped;
    };
    return {
      async run() {
        // Stepping aside, the Temporal worker's drain waits on activities stuck on the dead link:
        // not waited for beyond the bound (it ends in the background, then its connection closes).
        const drained = running.then(cleanUp, cleanUp);
        await Promise.race([drained, abandonedFor(STEP_ASIDE_DRAIN_MS)]);
        if (horizonBroken) throw horizonBroken;
        if (consumerDead) throw new Error('the Kafka consumer stopped for good; exiting so the worker is restarted');
      },
      shutdown,
    };
  } catch (err) {
    stopWorker();
    await running.catch(() => undefined);
    await cleanUp();
    throw err;
  }

  function abandonedFor(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const start = () => setTimeout(resolve, ms).unref();
      if (abandon.signal.aborted) start();
      else abandon.signal.addEventListener('abort', start, { once: true });
    });
  }

  async function cleanUp() {
    stopWatching?.();
    stopDeadLetterSweep?.();
    await consumer?.disconnect().catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
    await connection.close().catch(() => undefined);
  }
}

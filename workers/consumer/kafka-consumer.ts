import type { Client } from '@temporalio/client';
import type { Consumer } from 'kafkajs';
import { applyWorkflowRunner, createBatchHandler } from '../../src/inbox/consume-batch';
import type { DeadLetterTarget } from '../../src/inbox/deliver-dead-letters';
import { EventCoalescer } from '../../src/inbox/event-coalescer';
import { PartitionSequence } from '../../src/inbox/partition-sequence';
import { recordCommittedLag, withLagMetrics } from '../../src/observability/consumer-samplers';
import type { ConsumerDeps } from './deps';
import { registryDecoderFromConfig } from '../../src/formats/registry';
import { createKafka } from '../../src/kafka/client';
import { SocketFence } from './socket-fence';

export interface ConsumerKafkaSide {
  consumer: Consumer;
  /** The chunks being applied, per partition: what a stop waits for before leaving the group. */
  sequence: PartitionSequence;
  /** From now on nothing new is handed out (a stop has begun), and kafkajs never restarts the member. */
  markStopping(): void;
  /** Closes the member's connections for good (workers/consumer/socket-fence.ts): after its leave, or in place of one. */
  fence(): void;
}

/**
 * The consumer group member: joins, subscribes to the handlers' topics and turns each batch into
 * chunks applied by applyEventsWorkflow runs (src/inbox/consume-batch.ts). `onGaveUp` is called
 * when kafkajs gives up on the group for good; `abandon` gives up the chunks waiting when the
 * worker steps aside (workers/step-aside.ts).
 */
export async function startConsumerKafkaSide(deps: ConsumerDeps, client: Client, deadLetter: DeadLetterTarget | undefined, onGaveUp: () => void, abandon?: AbortSignal): Promise<ConsumerKafkaSide> {
  const { config, logger } = deps;
  // A client of its own, so that what this member opened can be closed without touching the
  // worker's other Kafka clients (the dead-letter producer, the group-size probe).
  const fence = new SocketFence();
  const kafka = createKafka(config, `credit-consumer-${process.pid}`, logger, { wrapSockets: (factory) => fence.wrap(factory) });
  let stopping = false;
  const consumer = kafka.consumer({
    groupId: config.kafka.consumerGroup,
    // kafkajs restarts a consumer whose run loop crashed, even one that was stopped meanwhile:
    // the restart would join the group again as a member nobody drives.
    // (retries: 5 is what kafkajs gives a consumer when `retry` is not set.)
    retry: { retries: 5, restartOnFailure: async () => !stopping },
    sessionTimeout: config.consumer.sessionTimeoutMs,
    rebalanceTimeout: config.consumer.rebalanceTimeoutMs,
    heartbeatInterval: Math.floor(config.consumer.sessionTimeoutMs / 4),
    // Not kafkajs' default 1 MB per partition / 10 MB per fetch: a fetch is decoded whole and
    // held until it is handled, and the worker has a memory budget (src/config/defaults.ts).
    maxBytesPerPartition: config.consumer.fetchMaxPartitionBytes,
    maxBytes: config.consumer.fetchMaxBytes,
    maxWaitTimeInMs: config.consumer.fetchMaxWaitMs,
  });
  // Each join is a new generation: chunks handed out before it are neither retried nor
  // committed by this process any more (src/inbox/consume-batch.ts).
  let generation = 0;
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    generation += 1;
    const fields = { pid: process.pid, memberId: e.payload.memberId, assignment: e.payload.memberAssignment };
    // A rebalance under way when the stop began ends in a join; the leave follows it.
    if (stopping) logger.info(fields, 'joined consumer group while leaving it; the leave follows');
    else logger.info(fields, 'joined consumer group');
  });
  consumer.on(consumer.events.CRASH, (e) => {
    logger.error({ err: e.payload.error?.message, restart: e.payload.restart }, 'kafka consumer crashed');
    // kafkajs gave up on the group: a process that only runs Temporal tasks would look alive
    // while consuming nothing. A member that is stopping is given up on purpose.
    if (!e.payload.restart && !stopping) onGaveUp();
  });
  await consumer.connect();
  // A new group starts at the earliest offset: a replay of everything is safe (the inbox drops
  // repeats), skipping events is not.
  await consumer.subscribe({ topics: deps.topics, fromBeginning: true });

  const coalescer = new EventCoalescer(applyWorkflowRunner(client, deps.taskQueue, deps.inFlight), {
    consumer: config.consumer.inboxName,
    group: config.kafka.consumerGroup,
    maxEvents: config.consumer.batchSize,
    maxBytes: config.consumer.batchMaxBytes,
    maxInFlight: config.consumer.maxInFlight,
    windowMs: config.consumer.coalesceWindowMs,
    onFlight: (r) => logger.info({ pid: process.pid, ...r }, 'batch applied'),
  });
  const sequence = new PartitionSequence();
  const eachBatch = createBatchHandler(
    {
      pool: deps.pool,
      coalescer,
      handlers: deps.handlers,
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
      abandon,
      schemaRegistry: registryDecoderFromConfig(config),
    },
    (chunk) => {
      recordCommittedLag(chunk);
      logger.debug({ pid: process.pid, ...chunk }, 'chunk committed');
    },
  );
  await consumer.run({
    // The batch handler moves the fetch position itself (resolveOffset, when a chunk is handed
    // out) and commits each chunk's offset itself, once the chunk is applied: kafkajs must never
    // commit a resolved offset on its own.
    eachBatchAutoResolve: false,
    autoCommit: false,
    partitionsConsumedConcurrently: config.kafka.partitions,
    eachBatch: withLagMetrics(eachBatch),
  });
  return { consumer, sequence, markStopping: () => (stopping = true), fence: () => fence.fence() };
}

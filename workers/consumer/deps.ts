import type { Kafka, Producer } from 'kafkajs';
import type { Pool } from 'pg';
import { TASK_QUEUES } from '../../src/config/constants';
import { workerDatabaseUrl, type Config } from '../../src/config/env';
import type { Logger } from '../../src/config/logger';
import { createPool, databaseTimeouts, endPool } from '../../src/db/pool';
import { InFlightBatches } from '../../src/inbox/batch-hand-off';
import { startDeadLetterSweep } from '../../src/inbox/dead-letter-sweep';
import type { DeadLetterTarget } from '../../src/inbox/deliver-dead-letters';
import { HandlerRegistry, type AnyEventHandler } from '../../src/inbox/handler';
import { createKafka } from '../../src/kafka/client';
import { createDeadLetterProducer } from '../../src/kafka/dead-letter-producer';
import { topicsForEventTypes } from '../../src/kafka/topics';

/** What one consumer worker's parts share, built before any of them starts. */
export interface ConsumerDeps {
  config: Config;
  logger: Logger;
  handlers: HandlerRegistry;
  /** The topics of the handlers' event types. */
  topics: string[];
  taskQueue: string;
  pool: Pool;
  kafka: Kafka;
  /** Batches this process started, for their activities (normally run here too) to take from memory. */
  inFlight: InFlightBatches;
  /** Ends the pool unless it was the service's. */
  close(): Promise<void>;
}

export function buildConsumerDeps(config: Config, handlerList: readonly AnyEventHandler[], logger: Logger, givenPool?: Pool): ConsumerDeps {
  const handlers = new HandlerRegistry(handlerList);
  // Every partition this process owns may have a batch in flight at once.
  const pool = givenPool ?? createPool(workerDatabaseUrl(config, 'consumer'), { schema: config.database.schema, max: Math.min(20, config.kafka.partitions + 4), ...databaseTimeouts(config) });
  return {
    config,
    logger,
    handlers,
    topics: topicsForEventTypes(config.kafka, handlers.eventTypes()),
    taskQueue: config.consumer.taskQueue ?? TASK_QUEUES.consumer,
    pool,
    kafka: createKafka(config, `credit-consumer-${process.pid}`, logger),
    inFlight: new InFlightBatches(),
    close: async () => {
      if (!givenPool) await endPool(pool);
    },
  };
}

/**
 * The dead-letter side when consumer.deadLetter is on: a producer for the copies, and the sweep
 * that retries the ones Kafka did not take. Undefined target when off.
 */
export async function startDeadLetters(deps: ConsumerDeps): Promise<{ target?: DeadLetterTarget; close(): Promise<void> }> {
  const { config } = deps;
  if (!config.consumer.deadLetter) return { close: async () => undefined };
  const producer: Producer = createDeadLetterProducer(deps.kafka);
  await producer.connect();
  const target = { producer, topic: config.kafka.deadLetterTopic, retryMs: config.consumer.deadLetterRetryMs, maxAttempts: config.consumer.deadLetterMaxAttempts };
  const stopSweep = startDeadLetterSweep(deps.pool, target, config.consumer.inboxName, deps.logger);
  return {
    target,
    close: async () => {
      stopSweep();
      await producer.disconnect().catch(() => undefined);
    },
  };
}

import type { AnyEventHandler } from '../src/inbox/handler';
import type { Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { assertRedeliveryHorizon, watchRedeliveryHorizon, type RedeliveryHorizonError } from '../src/kafka/guard-redelivery-horizon';
import { ensureTopics } from '../src/kafka/topics';
import { startConsumerSamplers } from '../src/observability/consumer-samplers';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { buildConsumerDeps, startDeadLetters } from './consumer/deps';
import { startConsumerKafkaSide, type ConsumerKafkaSide } from './consumer/kafka-consumer';
import { drainAndLeave } from './consumer/shutdown';
import { startConsumerTemporalSide, type ConsumerTemporalSide } from './consumer/temporal-side';
import { onAbort, type WorkerOptions } from './worker-options';

// One consumer worker: a member of the Kafka consumer group that turns batches into
// applyEventsWorkflow runs, and a Temporal worker that executes those workflows' activities
// (the registered handlers, each wrapped in the inbox guard). Start more to consume more
// partitions in parallel (up to the partition count). The library ships no consumer process of
// its own: the handlers are the service's (examples/payments/consumer-worker.ts is the example's).

export interface ConsumerWorkerOptions extends WorkerOptions {
  /** One handler per event type (defineHandler); the consumer subscribes to their types' topics. */
  handlers: readonly AnyEventHandler[];
}

/**
 * Runs one consumer worker until `signal` aborts (it drains and leaves the group first). Its inbox
 * identity is consumer.inboxName and its Kafka group kafka.consumerGroup; give each consumer of
 * the same events its own pair (and its own consumer.taskQueue when the handler sets differ).
 */
export async function runConsumerWorker(config: Config, options: ConsumerWorkerOptions): Promise<void> {
  const logger = options.logger ?? createLogger('consumer', config.logLevel);
  const observability = await startWorkerObservability(config, 'consumer', logger, options);
  const deps = buildConsumerDeps(config, options.handlers, logger, options.pool);
  const samplers = observability.sampling ? startConsumerSamplers(deps.pool, config, logger) : undefined;
  let temporal: ConsumerTemporalSide | undefined;
  let kafka: ConsumerKafkaSide | undefined;
  let deadLetters: Awaited<ReturnType<typeof startDeadLetters>> | undefined;
  let stopWatching: (() => void) | undefined;
  try {
    await ensureTopics(deps.kafka, config);
    // The inbox forgets ids after inbox.retentionMs: refuse to consume a topic that can redeliver
    // for longer (its real retention on the broker, not what the configuration says). Checked
    // before anything else starts, so the refusal is immediate and says why.
    await assertRedeliveryHorizon(deps.kafka, config, deps.topics);
    temporal = await startConsumerTemporalSide(deps, observability.tracing, options.connection);
    const worker = temporal;
    deadLetters = await startDeadLetters(deps);
    let gaveUp = false;
    kafka = await startConsumerKafkaSide(deps, temporal.client, deadLetters.target, () => {
      gaveUp = true;
      worker.stop();
    });
    const member = kafka;
    let horizonBroken: RedeliveryHorizonError | undefined;
    stopWatching = watchRedeliveryHorizon(deps.kafka, config, deps.topics, config.kafka.retentionCheckMs, (err) => {
      logger.error({ err: err.message }, 'the topic can now redeliver events the inbox will have forgotten: stopping');
      horizonBroken = err;
      void member.consumer.disconnect().finally(worker.stop);
    });
    onAbort(options.signal, () => drainAndLeave(deps, member, worker.stop));
    logger.info({ pid: process.pid, topics: deps.topics, eventTypes: deps.handlers.eventTypes(), consumer: config.consumer.inboxName, group: config.kafka.consumerGroup, taskQueue: deps.taskQueue }, 'consumer worker running');
    await temporal.running;
    if (horizonBroken) throw horizonBroken;
    // Non-zero for a supervisor, so the whole worker restarts.
    if (gaveUp) throw new Error('the Kafka consumer stopped for good; exiting so the worker is restarted');
  } catch (err) {
    temporal?.stop();
    await temporal?.running.catch(() => undefined);
    throw err;
  } finally {
    stopWatching?.();
    samplers?.stop();
    await observability.close();
    await kafka?.consumer.disconnect().catch(() => undefined);
    await deadLetters?.close();
    await temporal?.close().catch(() => undefined);
    await deps.close();
  }
}

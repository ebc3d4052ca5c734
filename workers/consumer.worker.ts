import type { AnyEventHandler } from '../src/inbox/handler';
import { workerDatabaseUrl, type Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { assertNoPreviousDefaultInbox } from '../src/inbox/guard-previous-defaults';
import { assertRedeliveryHorizon } from '../src/kafka/guard-redelivery-horizon';
import { ensureTopics } from '../src/kafka/topics';
import { startConsumerSamplers } from '../src/observability/consumer-samplers';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { buildConsumerDeps } from './consumer/deps';
import { groupMembers } from './consumer/group-members';
import { startConsumerMembership } from './consumer/membership';
import { kafkaProbe, postgresProbe, temporalProbe } from './link-health';
import { runSteppingAside } from './step-aside';
import { onAbort, poolConnectionSettings, type WorkerOptions } from './worker-options';

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
  try {
    // Before anything joins a group or creates a topic: an upgraded deployment that relied on
    // release 0.1's names would otherwise start afresh under the new ones (docs/upgrading.md).
    await assertNoPreviousDefaultInbox(deps.pool, config);
    await ensureTopics(deps.kafka, config);
    // The inbox forgets ids after inbox.retentionMs: refuse to consume a topic that can redeliver
    // for longer (its real retention on the broker, not what the configuration says). Checked
    // before anything else starts, so the refusal is immediate and says why.
    await assertRedeliveryHorizon(deps.kafka, config, deps.topics);
    const members = groupMembers(deps.kafka, config.kafka.consumerGroup, config.links.health.timeoutMs);
    const stopped = new AbortController();
    onAbort(options.signal, () => stopped.abort());
    try {
      // A consumer that cannot reach PostgreSQL, Kafka or Temporal leaves the group and stops taking
      // Temporal tasks until all answer again (workers/step-aside.ts): its partitions go to the
      // other members.
      await runSteppingAside({
        start: () => startConsumerMembership(deps, observability.tracing, options.connection),
        onStarted: (_membership, first) =>
          logger.info(
            { pid: process.pid, topics: deps.topics, eventTypes: deps.handlers.eventTypes(), consumer: config.consumer.inboxName, group: config.kafka.consumerGroup, taskQueue: deps.taskQueue },
            first ? 'consumer worker running' : 'consumer worker rejoined',
          ),
        probes: {
          postgres: postgresProbe(options.pool ? poolConnectionSettings(options.pool) : workerDatabaseUrl(config, 'consumer'), config.links.health.timeoutMs),
          kafka: kafkaProbe(deps.kafka, deps.topics[0]!),
          temporal: temporalProbe(config, config.links.health.timeoutMs),
        },
        // Another member of the group to hand the partitions to: a consumer alone keeps them, and
        // heartbeats through the outage, applying what it holds once the link is back. With its
        // Kafka link failing it cannot ask (the question would wait on that link), nor keep its
        // partitions (the broker ends a member it does not hear from): it steps aside.
        othersCanTakeOver: async (failing) => failing.includes('kafka') || (await members()) > 1,
        health: config.links.health,
        logger,
        stopped: stopped.signal,
      });
    } finally {
      await members.close();
    }
  } finally {
    samplers?.stop();
    await observability.close();
    await deps.close();
  }
}

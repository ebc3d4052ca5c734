import { setTimeout as sleep } from 'node:timers/promises';
import type { NativeConnection } from '@temporalio/worker';
import { watchRedeliveryHorizon, type RedeliveryHorizonError } from '../../src/kafka/guard-redelivery-horizon';
import type { startWorkerObservability } from '../../src/observability/worker-observability';
import type { SteppableWork } from '../step-aside';
import { startDeadLetters, type ConsumerDeps } from './deps';
import { startConsumerKafkaSide, type ConsumerKafkaSide } from './kafka-consumer';
import { drainAndLeave } from './shutdown';
import { startConsumerTemporalSide } from './temporal-side';

// How long a consumer stepping aside waits for its Temporal worker to drain before it may rejoin:
// the drain waits on activities stuck on the dead link until their query timeout; it goes on in
// the background, and its connection closes when it is done.
const STEP_ASIDE_DRAIN_MS = 15_000;

/**
 * One membership of a consumer worker: its Temporal worker (the apply workflows' activities), its
 * dead-letter sweep and its Kafka group member, started together and ended together. A consumer
 * worker runs one at a time, and a new one after each heal (workers/step-aside.ts). `shutdown`
 * drains and leaves (workers/consumer/shutdown.ts); stepping aside it first gives up the chunks
 * waiting on the dead link, so the member stops heartbeating and leaves at once.
 */
export async function startConsumerMembership(
  deps: ConsumerDeps,
  tracing: Awaited<ReturnType<typeof startWorkerObservability>>['tracing'],
  connection: NativeConnection | undefined,
): Promise<SteppableWork> {
  const { config, logger } = deps;
  const abandon = new AbortController();
  const temporal = await startConsumerTemporalSide(deps, tracing, connection);
  let deadLetters: Awaited<ReturnType<typeof startDeadLetters>> | undefined;
  let kafka: ConsumerKafkaSide | undefined;
  let stopWatching: (() => void) | undefined;
  let gaveUp = false;
  let horizonBroken: RedeliveryHorizonError | undefined;
  const cleanUp = async () => {
    stopWatching?.();
    await kafka?.consumer.disconnect().catch(() => undefined);
    kafka?.fence();
    await deadLetters?.close();
    await temporal.close().catch(() => undefined);
  };
  try {
    deadLetters = await startDeadLetters(deps);
    kafka = await startConsumerKafkaSide(
      deps,
      temporal.client,
      deadLetters.target,
      () => {
        gaveUp = true;
        temporal.stop();
      },
      abandon.signal,
    );
    const member = kafka;
    stopWatching = watchRedeliveryHorizon(deps.kafka, config, deps.topics, config.kafka.retentionCheckMs, (err) => {
      logger.error({ err: err.message }, 'the topic can now redeliver events the inbox will have forgotten: stopping');
      horizonBroken = err;
      void member.consumer.disconnect().finally(temporal.stop);
    });
  } catch (err) {
    temporal.stop();
    await temporal.running.catch(() => undefined);
    await cleanUp();
    throw err;
  }
  const member = kafka;
  let stopping: Promise<void> | undefined;
  return {
    shutdown(stepAside = false, failingLink) {
      if (stepAside) abandon.abort();
      stopping ??= drainAndLeave(deps, member, temporal.stop, stepAside, failingLink === 'kafka');
      return stopping;
    },
    async run() {
      const drained = temporal.running.finally(cleanUp);
      drained.catch(() => undefined);
      const givenUp = new Promise<void>((resolve) => abandon.signal.addEventListener('abort', () => void sleep(STEP_ASIDE_DRAIN_MS, undefined, { ref: false }).then(resolve), { once: true }));
      await Promise.race([drained, givenUp]);
      if (horizonBroken) throw horizonBroken;
      // Non-zero for a supervisor, so the whole worker restarts.
      if (gaveUp) throw new Error('the Kafka consumer stopped for good; exiting so the worker is restarted');
    },
  };
}

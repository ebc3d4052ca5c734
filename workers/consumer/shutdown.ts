import { setTimeout as sleep } from 'node:timers/promises';
import type { ConsumerDeps } from './deps';
import type { ConsumerKafkaSide } from './kafka-consumer';

/**
 * Stops a consumer in the order its parts need: nothing new is fetched or started; the chunks
 * being applied finish (on this worker) and are committed while it is still in the group, so the
 * next owner does not get them again; then it leaves the group, then `stopWorker` drains the
 * Temporal worker. The wait for the chunks is bounded (PostgreSQL may be down). Stepping aside
 * (a link is down: workers/step-aside.ts), the chunks are not waited for at all: they cannot
 * finish, and the next owner applies them again, the inbox absorbing what did commit.
 */
export function drainAndLeave(deps: ConsumerDeps, kafka: ConsumerKafkaSide, stopWorker: () => void, stepAside = false): Promise<void> {
  deps.logger.info(
    stepAside
      ? 'stepping aside: leaving the consumer group, then draining the Temporal worker'
      : 'stopping: finishing the chunks being applied, leaving the consumer group, then draining the Temporal worker',
  );
  kafka.markStopping();
  try {
    kafka.consumer.pause(deps.topics.map((topic) => ({ topic })));
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, 'could not pause the consumer before stopping');
  }
  // Unreferenced timers do not hold the process.
  const bound = () => sleep(deps.config.consumer.rebalanceTimeoutMs, undefined, { ref: false });
  // Stepping aside, leaving the group is a courtesy: over a dead Kafka link it cannot arrive (the
  // broker ends the member it no longer hears from), and the health check waits for the step-aside
  // to finish before its next round, so the rejoin after a heal would wait out the whole bound.
  const leaveBound = () => (stepAside ? sleep(deps.config.links.health.timeoutMs, undefined, { ref: false }) : bound());
  return (stepAside ? Promise.resolve() : Promise.race([kafka.sequence.drain(), bound()]))
    .then(() => Promise.race([kafka.consumer.disconnect(), leaveBound()]))
    .catch(() => undefined)
    .finally(stopWorker);
}

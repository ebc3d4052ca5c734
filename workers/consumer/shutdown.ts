import { setTimeout as sleep } from 'node:timers/promises';
import type { ConsumerDeps } from './deps';
import type { ConsumerKafkaSide } from './kafka-consumer';

/**
 * Stops a consumer in the order its parts need: nothing new is fetched or started; the chunks
 * being applied finish (on this worker) and are committed while it is still in the group, so the
 * next owner does not get them again; then it leaves the group, then `stopWorker` drains the
 * Temporal worker. The wait for the chunks is bounded (PostgreSQL may be down).
 */
export function drainAndLeave(deps: ConsumerDeps, kafka: ConsumerKafkaSide, stopWorker: () => void): void {
  deps.logger.info('stopping: finishing the chunks being applied, leaving the consumer group, then draining the Temporal worker');
  kafka.markStopping();
  try {
    kafka.consumer.pause(deps.topics.map((topic) => ({ topic })));
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message }, 'could not pause the consumer before stopping');
  }
  // An unreferenced timer does not hold the process.
  void Promise.race([kafka.sequence.drain(), sleep(deps.config.consumer.rebalanceTimeoutMs, undefined, { ref: false })])
    .then(() => kafka.consumer.disconnect())
    .finally(stopWorker);
}

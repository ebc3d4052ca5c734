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
 *
 * Once the leave is done, or its bound is over, the member's connections are closed for good
 * (workers/consumer/socket-fence.ts): a kafkajs consumer that did not finish stopping would
 * otherwise join the group again by itself and hold partitions no one applies.
 */
export function drainAndLeave(deps: ConsumerDeps, kafka: ConsumerKafkaSide, stopWorker: () => void, stepAside = false, kafkaFailing = false): Promise<void> {
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
  const { rebalanceTimeoutMs } = deps.config.consumer;
  // Unreferenced timers do not hold the process.
  const bound = () => sleep(rebalanceTimeoutMs, undefined, { ref: false });
  // The leave waits for a rebalance under way to end (kafkajs sends LeaveGroup once its run loop
  // is out of the join), which takes up to the rebalance timeout: over a working Kafka link it is
  // given that long. Over a dead one it cannot arrive (the broker ends the member it no longer
  // hears from), and the health check waits for the step-aside before its next round, so the
  // rejoin after a heal would wait out the whole bound: it gets the health check's timeout.
  const leaveMs = stepAside && kafkaFailing ? deps.config.links.health.timeoutMs : rebalanceTimeoutMs;
  let left = false;
  return (stepAside ? Promise.resolve() : Promise.race([kafka.sequence.drain(), bound()]))
    .then(() => Promise.race([kafka.consumer.disconnect().then(() => void (left = true)), sleep(leaveMs, undefined, { ref: false })]))
    .catch(() => undefined)
    .finally(() => {
      if (!left) deps.logger.warn({ boundMs: leaveMs }, 'the consumer group leave did not complete within its bound: its connections are closed, and the broker drops the member after its session timeout');
      kafka.fence();
      stopWorker();
    });
}

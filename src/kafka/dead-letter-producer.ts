import type { Kafka, Producer } from 'kafkajs';

/**
 * The consumer's dead-letter producer. The same two choices as the relay's (src/kafka/relay-producer.ts),
 * for the same reason:
 * - `retries: 0`. kafkajs 2.2.4's own retries can resolve a send whose partition's leader moved
 *   mid-send without writing it (kafkajs issue #1303); here that would record a copy as sent
 *   that the dead-letter topic never got. A failed attempt instead leaves the copy pending and
 *   the consumer's dead-letter sweep retries it with a fresh send (src/inbox/deliver-dead-letters.ts).
 *   It also keeps one attempt short: a missing topic fails at once instead of after kafkajs'
 *   backoff, so the chunk that parked the message is not held up.
 * - No topic auto-creation: a dead-letter topic created by a send would get broker defaults, not
 *   the retention and size limits `setup` gives it. A missing one is an operator's fix; the copies
 *   wait (pending) meanwhile.
 */
export function createDeadLetterProducer(kafka: Kafka): Producer {
  return kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
}

import type { Kafka, Producer } from 'kafkajs';

/**
 * The relay's Kafka producer. Two choices, both about never marking a row published that Kafka
 * does not hold:
 * - Not the idempotent producer: it allows one request in flight per broker and cannot recover
 *   from a sequence error without a new instance. Duplicates are already possible (the crash
 *   gap) and the inbox absorbs them; one shard never has two sends in flight, so order holds.
 * - No retries inside kafkajs (`retries: 0`). kafkajs 2.2.4 keeps the brokers that answered a
 *   send across its own retries and skips them on the next attempt; when a partition's leader
 *   dies mid-send and leadership moves to a broker that had already answered for its other
 *   partitions, that partition's messages are never sent, yet the send resolves (kafkajs issue
 *   #1303). test/e2e/kafka-cluster.e2e.test.ts lost 14 of 1,713 events that way with kill -9 of a
 *   leader. Without those retries the send fails, and the relay's publish activity retries the
 *   whole batch with a fresh send (a re-send at worst, which the inbox absorbs).
 */
export function createRelayProducer(kafka: Kafka): Producer {
  return kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
}

import type { Kafka } from 'kafkajs';
import type { Config } from '../config/env';

/** The topic an event of this type is published to: its route, else the default topic. */
export function topicForEventType(kafka: Config['kafka'], eventType: string): string {
  return Object.hasOwn(kafka.routes, eventType) ? kafka.routes[eventType]! : kafka.topic;
}

/** Every topic the relay may publish to: the default one and each routed one. */
export function eventTopics(kafka: Config['kafka']): string[] {
  return [...new Set([kafka.topic, ...Object.values(kafka.routes)])].sort();
}

/** The topics a consumer of these event types subscribes to. */
export function topicsForEventTypes(kafka: Config['kafka'], eventTypes: string[]): string[] {
  return [...new Set(eventTypes.map((t) => topicForEventType(kafka, t)))].sort();
}

/**
 * Creates the event topics (default and routed) and the dead-letter topic when missing.
 * Consumers subscribe only after this: subscribing to a missing topic with auto-creation off
 * leaves the group idle.
 */
export async function ensureTopics(kafka: Kafka, config: Config, topics = [...eventTopics(config.kafka), config.kafka.deadLetterTopic]): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [...new Set(topics)].filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: config.kafka.partitions,
          replicationFactor: 1,
          configEntries: [
            { name: 'retention.ms', value: String(config.kafka.topicRetentionMs) },
            { name: 'max.message.bytes', value: String(config.kafka.maxMessageBytes) },
          ],
        })),
      });
    }
    return missing;
  } finally {
    await admin.disconnect();
  }
}

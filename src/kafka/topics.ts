import type { Admin, Kafka } from 'kafkajs';
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
/** The settings every topic `setup` creates gets. */
export function topicConfigEntries(config: Config): { name: string; value: string }[] {
  return [
    { name: 'retention.ms', value: String(config.kafka.topicRetentionMs) },
    // With acks=all (kafkajs' default), a write succeeds only once this many replicas have it.
    { name: 'min.insync.replicas', value: String(config.kafka.minInsyncReplicas) },
    { name: 'max.message.bytes', value: String(config.kafka.maxMessageBytes) },
  ];
}

export async function ensureTopics(kafka: Kafka, config: Config, topics = [...eventTopics(config.kafka), config.kafka.deadLetterTopic]): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = [...new Set(topics)].filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        // Waited for below: kafkajs' own wait gives up when a broker of a cluster has not yet
        // heard of the new topic (UNKNOWN_TOPIC_OR_PARTITION), which is normal for a moment.
        waitForLeaders: false,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: config.kafka.partitions,
          replicationFactor: config.kafka.replicationFactor,
          configEntries: topicConfigEntries(config),
        })),
      });
      await waitForLeaders(admin, missing, config.kafka.partitions);
    }
    return missing;
  } finally {
    await admin.disconnect();
  }
}

/** Until every partition of the new topics has a leader, as the broker answering says (≤ 30 s). */
async function waitForLeaders(admin: Admin, topics: string[], partitions: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const { topics: found } = await admin.fetchTopicMetadata({ topics });
      if (found.length === topics.length && found.every((t) => t.partitions.length === partitions && t.partitions.every((p) => p.leader >= 0))) return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline) throw new Error(`topics ${topics.join(', ')} have no leader for every partition after 30 s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

import type { Kafka } from 'kafkajs';
import type { Config } from '../config/env';

/**
 * Creates the events topic and its dead-letter topic when missing. Consumers subscribe only
 * after this: subscribing to a missing topic with auto-creation off leaves the group idle.
 */
export async function ensureTopics(kafka: Kafka, config: Config, topics = [config.kafka.topic, config.kafka.deadLetterTopic]): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((topic) => ({
          topic,
          numPartitions: config.kafka.partitions,
          replicationFactor: config.kafka.replicationFactor,
          configEntries: [
            { name: 'retention.ms', value: String(config.kafka.topicRetentionMs) },
            // With acks=all (kafkajs' default), a write succeeds only once this many replicas have it.
            { name: 'min.insync.replicas', value: String(config.kafka.minInsyncReplicas) },
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

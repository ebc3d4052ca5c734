import type { Kafka } from 'kafkajs';
import { runId } from './run-id';

/**
 * A fresh topic per benchmark, so runs never read each other's messages. LogAppendTime makes a
 * message's timestamp the broker's append time, which the latency runs measure against.
 */
export async function createBenchTopic(kafka: Kafka, prefix = 'bench-relay'): Promise<string> {
  const topic = runId(prefix);
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [{ topic, numPartitions: 6, replicationFactor: 1, configEntries: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] }],
  });
  await admin.disconnect();
  return topic;
}

export async function deleteBenchTopics(kafka: Kafka, topics: string[]): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
}

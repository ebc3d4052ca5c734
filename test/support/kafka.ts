import { Kafka, logLevel, type Admin } from 'kafkajs';
import { loadConfig } from '../../config/env';
import { uniqueName } from './ids';

export function testKafka(clientId = uniqueName('test-client')): Kafka {
  return new Kafka({ clientId, brokers: loadConfig().kafka.brokers, logLevel: logLevel.NOTHING });
}

/** Creates a topic of its own for one test; `remove` deletes it. */
export async function createTestTopic(partitions = 3): Promise<{ topic: string; remove(): Promise<void> }> {
  const topic = uniqueName('test-topic');
  const admin: Admin = testKafka().admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  return {
    topic,
    async remove() {
      const a = testKafka().admin();
      await a.connect();
      await a.deleteTopics({ topics: [topic] }).catch(() => undefined);
      await a.disconnect();
    },
  };
}

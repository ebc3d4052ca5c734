import { Kafka, logLevel } from 'kafkajs';
import { loadConfig } from '../../src/config/env';
import { uniqueName } from './ids';

export function testKafka(clientId = uniqueName('test-client')): Kafka {
  return new Kafka({ clientId, brokers: loadConfig().kafka.brokers, logLevel: logLevel.NOTHING });
}

export interface TestTopicOptions {
  /** Readable start of its name; default `test-topic`. */
  prefix?: string;
  /**
   * Stamp messages with the broker's append time (LogAppendTime) instead of the producer's, for
   * benchmarks measuring latency against the moment a message reached Kafka.
   */
  logAppendTime?: boolean;
  /** The client to create it with; default testKafka(). */
  kafka?: Kafka;
}

/** Creates a topic of its own for one test or benchmark run (runs never read each other's messages); `remove` deletes it. */
export async function createTestTopic(partitions = 3, opts: TestTopicOptions = {}): Promise<{ topic: string; remove(): Promise<void> }> {
  const topic = uniqueName(opts.prefix ?? 'test-topic');
  const kafka = opts.kafka ?? testKafka();
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries: opts.logAppendTime ? [{ name: 'message.timestamp.type', value: 'LogAppendTime' }] : [] }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
  return { topic, remove: () => deleteTopics([topic], kafka) };
}

/** Deletes topics (a missing one is no error). */
export async function deleteTopics(topics: string[], kafka: Kafka = testKafka()): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics }).catch(() => undefined);
  await admin.disconnect();
}

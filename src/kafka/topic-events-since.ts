import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { HEADERS } from './message-format';

export interface TopicEvent {
  eventId: string;
  partition: number;
  offset: string;
  /** The message's timestamp (ISO): when the relay published it. */
  publishedAt: string;
}

/**
 * Every event id on `topic` in messages published at or after `since`, up to the topic's end when
 * the read starts: what the audit repair compares with the database after a failover. Reads with
 * a group of its own that commits nothing and is deleted afterwards, so no consumer's offsets move.
 */
export async function topicEventsSince(kafka: Kafka, topic: string, since: Date, timeoutMs: number): Promise<TopicEvent[]> {
  const admin = kafka.admin();
  await admin.connect();
  let starts: Map<number, bigint>;
  let ends: Map<number, bigint>;
  try {
    // Asked about a topic it does not have, the broker answers with an error kafkajs retries for a minute.
    if (!(await admin.listTopics()).includes(topic)) throw new Error(`topic ${topic} does not exist: nothing to compare (KAFKA_TOPIC, or --no-topic)`);
    const high = await admin.fetchTopicOffsets(topic);
    ends = new Map(high.map((p) => [p.partition, BigInt(p.high)]));
    const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, since.getTime());
    // -1: nothing published since then in that partition.
    starts = new Map(byTime.map((p) => [p.partition, p.offset === '-1' ? ends.get(p.partition)! : BigInt(p.offset)]));
  } finally {
    await admin.disconnect();
  }
  const remaining = new Set([...ends].filter(([partition, end]) => starts.get(partition)! < end).map(([partition]) => partition));
  // Keyed by position: a message the consumer is given twice (before and after the seek) counts once.
  const events = new Map<string, TopicEvent>();
  if (remaining.size === 0) return [];

  const groupId = `outbox-audit-repair-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000 });
  let timer: NodeJS.Timeout | undefined;
  await consumer.connect();
  try {
    let reachedEnd!: () => void;
    const done = new Promise<void>((resolve, reject) => {
      reachedEnd = resolve;
      timer = setTimeout(() => reject(new Error(`reading ${topic} since ${since.toISOString()}: not at its end after ${timeoutMs} ms`)), timeoutMs);
    });
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const offset = BigInt(message.offset);
        if (offset < starts.get(partition)! || offset >= ends.get(partition)!) return;
        const eventId = message.headers?.[HEADERS.eventId]?.toString();
        if (eventId !== undefined) events.set(`${partition}:${offset}`, { eventId, partition, offset: message.offset, publishedAt: new Date(Number(message.timestamp)).toISOString() });
        if (offset === ends.get(partition)! - 1n) remaining.delete(partition);
        if (remaining.size === 0) reachedEnd();
      },
    });
    // Straight to the first message since `since`, not through the whole retained topic.
    for (const partition of remaining) consumer.seek({ topic, partition, offset: String(starts.get(partition)!) });
    await done;
  } finally {
    clearTimeout(timer);
    await consumer.disconnect();
    const cleanup = kafka.admin();
    await cleanup.connect();
    await cleanup.deleteGroups([groupId]).catch(() => undefined);
    await cleanup.disconnect();
  }
  return [...events.values()];
}

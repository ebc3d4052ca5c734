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

export interface TopicWindowRead {
  /** Messages published in the window (all partitions). */
  inWindow: number;
  /** Of those, how many were read: fewer when `maxMessages` cut the read short. */
  read: number;
}

export interface TopicWindowOptions {
  /** Messages published at or after this instant ... */
  since: Date;
  /** ... and before this one; the topic's end when the read starts if left out. */
  until?: Date;
  /**
   * Read at most about this many (split evenly over the partitions that have messages in the
   * window, each from the window's start): bounds one read's work on a busy topic.
   */
  maxMessages?: number;
  timeoutMs: number;
  /** Given the events read, `chunk` at a time; the read waits for it before fetching on. */
  onEvents: (events: TopicEvent[]) => Promise<void>;
  chunk?: number;
}

/**
 * The event ids on `topic` in messages published in a window, handed on in chunks as they are
 * read: what the audit compares with the database (after a failover, the topic may hold events
 * the database lost). Reads with a group of its own that commits nothing and is deleted
 * afterwards, so no consumer's offsets move.
 */
export async function readTopicWindow(kafka: Kafka, topic: string, opts: TopicWindowOptions): Promise<TopicWindowRead> {
  const { starts, ends, inWindow } = await windowOffsets(kafka, topic, opts);
  const remaining = new Set([...ends].filter(([partition, end]) => starts.get(partition)! < end).map(([partition]) => partition));
  const read = [...remaining].reduce((n, p) => n + Number(ends.get(p)! - starts.get(p)!), 0);
  if (remaining.size === 0) return { inWindow, read };

  const chunkSize = opts.chunk ?? 10_000;
  // Each partition's next offset to hand on: a message the consumer is given twice (before and after the seek) counts once.
  const next = new Map(starts);
  let pending: TopicEvent[] = [];
  const groupId = `outbox-audit-read-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000 });
  let timer: NodeJS.Timeout | undefined;
  await consumer.connect();
  try {
    let reachedEnd!: () => void;
    let failed!: (err: unknown) => void;
    const done = new Promise<void>((resolve, reject) => {
      reachedEnd = resolve;
      failed = reject;
      timer = setTimeout(() => reject(new Error(`reading ${topic} since ${opts.since.toISOString()}: not at the window's end after ${opts.timeoutMs} ms`)), opts.timeoutMs);
    });
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const partition = batch.partition;
        for (const message of batch.messages) {
          const offset = BigInt(message.offset);
          if (offset < next.get(partition)! || offset >= ends.get(partition)!) continue;
          next.set(partition, offset + 1n);
          const eventId = message.headers?.[HEADERS.eventId]?.toString();
          if (eventId !== undefined) pending.push({ eventId, partition, offset: message.offset, publishedAt: new Date(Number(message.timestamp)).toISOString() });
          if (offset === ends.get(partition)! - 1n) remaining.delete(partition);
        }
        try {
          if (pending.length >= chunkSize || (remaining.size === 0 && pending.length > 0)) {
            const events = pending;
            pending = [];
            await opts.onEvents(events);
          }
        } catch (err) {
          failed(err);
          return;
        }
        if (remaining.size === 0) reachedEnd();
      },
    });
    // Straight to the window's first message, not through the whole retained topic.
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
  return { inWindow, read };
}

/** The topic does not exist (yet): nothing was ever published to it. */
export class TopicMissingError extends Error {
  constructor(readonly topic: string) {
    super(`topic ${topic} does not exist: nothing to compare (KAFKA_TOPIC, or --no-topic)`);
    this.name = 'TopicMissingError';
  }
}

/** Each partition's first offset in the window and the offset after its last one read, capped by maxMessages. */
async function windowOffsets(kafka: Kafka, topic: string, opts: Pick<TopicWindowOptions, 'since' | 'until' | 'maxMessages'>) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    // Asked about a topic it does not have, the broker answers with an error kafkajs retries for a minute.
    if (!(await admin.listTopics()).includes(topic)) throw new TopicMissingError(topic);
    const high = new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, BigInt(p.high)]));
    // -1: nothing published since then in that partition.
    const at = async (instant: Date) => new Map((await admin.fetchTopicOffsetsByTimestamp(topic, instant.getTime())).map((p) => [p.partition, p.offset === '-1' ? high.get(p.partition)! : BigInt(p.offset)]));
    const starts = await at(opts.since);
    const ends = opts.until ? await at(opts.until) : new Map(high);
    const inWindow = [...ends].reduce((n, [p, end]) => n + Math.max(0, Number(end - starts.get(p)!)), 0);
    const busy = [...ends].filter(([p, end]) => end > starts.get(p)!).length;
    if (opts.maxMessages !== undefined && busy > 0 && inWindow > opts.maxMessages) {
      const perPartition = BigInt(Math.ceil(opts.maxMessages / busy));
      for (const [p, end] of ends) if (end - starts.get(p)! > perPartition) ends.set(p, starts.get(p)! + perPartition);
    }
    return { starts, ends, inWindow };
  } finally {
    await admin.disconnect();
  }
}

/**
 * Every event id on `topic` in messages published at or after `since`, up to the topic's end when
 * the read starts: what the audit repair compares with the database after a failover.
 */
export async function topicEventsSince(kafka: Kafka, topic: string, since: Date, timeoutMs: number): Promise<TopicEvent[]> {
  const events: TopicEvent[] = [];
  await readTopicWindow(kafka, topic, { since, timeoutMs, onEvents: async (chunk) => void events.push(...chunk) });
  return events;
}

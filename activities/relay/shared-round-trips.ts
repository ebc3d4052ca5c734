import type { Producer, TopicMessages } from 'kafkajs';
import type { Config } from '../../src/config/env';
import type { SqlExecutor } from '../../src/db/executor';
import { markPublished, markPublishedReturningIds } from '../../src/outbox/queries/mark-published';
import { readPendingRows, type PendingRow } from '../../src/outbox/queries/read-pending-rows';
import { readPendingSizes, type PendingRowSize } from '../../src/outbox/queries/read-pending-sizes';
import { boundedCall, sendBoundMs } from '../../src/kafka/bounded-send';
import { CoalesceWhileInFlight } from './coalesce-while-in-flight';

/** A batch's messages for Kafka, grouped by topic, and their size in bytes. */
export interface OutgoingMessages {
  topicMessages: TopicMessages[];
  bytes: number;
}

/**
 * The per-batch round trips every shard of a relay worker makes, shared by its shards: reading
 * sizes and bodies, marking published, sending to Kafka. Small calls made in one turn of the
 * event loop, or while one of their kind is in flight, leave together (coalesce-while-in-flight.ts),
 * so at a trickle the shards woken by one commit share a statement of each kind and one Kafka
 * request instead of one each. Each caller still gets only its own rows, and a shard's calls stay
 * in its own order (it makes the next only after the last returned). The poll is not shared: it runs on the connection that
 * holds the shard's lock.
 */
export interface SharedRoundTrips {
  /** Sizes, with each row's body when the rows read together were small. */
  readSizes(ids: number[]): Promise<PendingRowSize[]>;
  readRows(ids: number[]): Promise<PendingRow[]>;
  markPublished(ids: number[]): Promise<number>;
  send(messages: OutgoingMessages): Promise<void>;
  /** One request of its own (a row sent alone after Kafka refused a batch: never blamed on another shard's row). */
  sendAlone(topicMessages: TopicMessages[]): Promise<void>;
}

/** Rows of one merged read handed back to the callers whose ids they are, in the rows' order. */
function splitById<R extends { id: number }>(idLists: number[][], rows: R[]): R[][] {
  const callerOf = new Map<number, number>();
  idLists.forEach((ids, caller) => ids.forEach((id) => callerOf.set(id, caller)));
  const out = idLists.map(() => [] as R[]);
  for (const row of rows) {
    const caller = callerOf.get(row.id);
    if (caller !== undefined) out[caller]!.push(row);
  }
  return out;
}

// A statement reading sizes brings the bodies along when they add up to at most this (or the
// batch byte budget, if smaller): one statement instead of two for a batch of small rows. What is
// read this way is held before the process-wide budget is asked (bytes-in-flight.ts), so it is
// kept small: 8 shards' worth is 8 MiB at most.
const BODIES_WITH_SIZES_UP_TO_BYTES = 1024 * 1024;

export function createSharedRoundTrips(pool: SqlExecutor, producer: Producer, config: Config): SharedRoundTrips {
  // A full batch goes alone; batches under a quarter of one gather, up to one batch of ids.
  const idLimits = { weight: (ids: number[]) => ids.length, smallWeight: Math.max(1, config.relay.batchSize / 4), maxWeight: config.relay.batchSize };
  const byIds = <R extends { id: number }>(read: (db: SqlExecutor, ids: number[]) => Promise<R[]>) =>
    new CoalesceWhileInFlight<number[], R[]>(
      async (idLists) => splitById(idLists, await read(pool, idLists.flat())),
      (ids) => read(pool, ids),
      idLimits,
    );
  const bodiesUpTo = Math.min(BODIES_WITH_SIZES_UP_TO_BYTES, config.relay.batchMaxBytes);
  const sizes = byIds((db, ids) => readPendingSizes(db, ids, bodiesUpTo));
  const rows = byIds(readPendingRows);
  const marks = new CoalesceWhileInFlight<number[], number>(
    async (idLists) => {
      const marked = new Set(await markPublishedReturningIds(pool, idLists.flat()));
      return idLists.map((ids) => ids.filter((id) => marked.has(id)).length);
    },
    (ids) => markPublished(pool, ids),
    idLimits,
  );

  // Bounded whatever kafkajs does inside, so a send on a dead link fails the batch (retried by
  // the publish activity) instead of holding the shard's session.
  const sendBound = sendBoundMs(config);
  const sendNow = async (topicMessages: TopicMessages[]) => {
    await boundedCall(producer.sendBatch({ acks: -1, topicMessages }), sendBound, 'Kafka send');
  };
  // Merged requests stay within Kafka's message limit in total, so no partition's record batch
  // in them can pass it (each caller's own messages are already cut to fit).
  const sends = new CoalesceWhileInFlight<OutgoingMessages, void>(
    async (batches) => {
      const byTopic = new Map<string, TopicMessages['messages']>();
      for (const { topicMessages } of batches) {
        for (const { topic, messages } of topicMessages) {
          const list = byTopic.get(topic) ?? [];
          list.push(...messages);
          byTopic.set(topic, list);
        }
      }
      await sendNow([...byTopic].map(([topic, messages]) => ({ topic, messages })));
      return batches.map(() => undefined);
    },
    (batch) => sendNow(batch.topicMessages),
    { weight: (m) => m.bytes, smallWeight: config.kafka.maxMessageBytes / 4, maxWeight: config.kafka.maxMessageBytes },
  );

  return {
    readSizes: (ids) => sizes.call(ids),
    readRows: (ids) => rows.call(ids),
    markPublished: (ids) => marks.call(ids),
    send: (messages) => sends.call(messages),
    sendAlone: sendNow,
  };
}

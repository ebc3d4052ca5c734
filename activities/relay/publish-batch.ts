import { Context, log } from '@temporalio/activity';
import type { Message } from 'kafkajs';
import { topicForEventType } from '../../src/kafka/topics';
import { startPublishSpans } from '../../src/observability/publish-spans';
import { outboxParkedTotal, recordPublished } from '../../src/observability/relay-metrics';
import { toKafkaMessage, type CloudEventsEncoding, type OutboxKafkaMessage } from '../../src/outbox/kafka-message';
import { cloudEventsModeOf } from '../../src/formats/cloudevents/settings';
import { registryEncoderFromConfig } from '../../src/formats/registry';
import { encodeWithRegistry } from '../../src/formats/registry/relay-encoding';
import { parkRows } from '../../src/outbox/queries/park-rows';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';
import { recordFailures } from '../../src/outbox/queries/record-failures';
import type { RelayStepDeps } from './deps';
import { schemaRefusal } from './schema-refusal';
import { loadWithinByteBudget } from './load-within-budget';
import { describeError, isRecordRejection } from './send-errors';
import type { PublishBatchInput, PublishBatchOutput } from './types';

// Heartbeats show Temporal the worker is alive while a send is in flight; a killed worker
// stops them, and the heartbeat timeout hands the batch to another worker within seconds.
// Only when run as an ordinary activity: a local activity cannot heartbeat (its liveness is
// the workflow task's, which the worker heartbeats itself).
const HEARTBEAT_EVERY_MS = 2_000;

interface Sendable {
  row: PendingRow;
  message: OutboxKafkaMessage;
  bytes: number;
}

export function createPublishBatch({ pool, config, bytesInFlight, roundTrips, events, schemaRegistry = registryEncoderFromConfig(config) }: RelayStepDeps) {
  // Each row goes to the topic its event type is routed to (KAFKA_TOPIC_ROUTES, else KAFKA_TOPIC).
  const topicOf = (item: Sendable) => topicForEventType(config.kafka, item.row.eventType);
  // CloudEvents per topic (kafka.cloudEvents): the content mode of the row's topic, if it has one.
  const cloudEventsOf = (row: PendingRow): CloudEventsEncoding | undefined => {
    const mode = cloudEventsModeOf(config.kafka.cloudEvents, topicForEventType(config.kafka, row.eventType));
    return mode === undefined ? undefined : { mode, settings: config.kafka.cloudEvents };
  };

  /**
   * One request for the lot, grouped by topic; id order is kept within each topic. A batch's
   * request may carry other shards' small batches too (shared-round-trips.ts); a row sent alone
   * after a refusal goes in a request of its own, so one shard's bad row is never blamed on another.
   */
  async function send(items: Sendable[], { alone = false } = {}) {
    const byTopic = new Map<string, Message[]>();
    let bytes = 0;
    for (const item of items) {
      const topic = topicOf(item);
      const list = byTopic.get(topic) ?? [];
      list.push(item.message);
      byTopic.set(topic, list);
      bytes += item.bytes;
    }
    const topicMessages = [...byTopic].map(([topic, messages]) => ({ topic, messages }));
    await (alone ? roundTrips.sendAlone(topicMessages) : roundTrips.send({ topicMessages, bytes }));
  }

  /**
   * Sends in id order. Normally one producer.send; split only where the batch would exceed the
   * broker's size limit (a Kafka record batch larger than max.message.bytes is refused whole).
   */
  async function sendAll(items: Sendable[]) {
    let chunk: Sendable[] = [];
    let chunkBytes = 0;
    for (const item of items) {
      if (chunk.length > 0 && chunkBytes + item.bytes > config.kafka.maxMessageBytes) {
        await send(chunk);
        chunk = [];
        chunkBytes = 0;
      }
      chunk.push(item);
      chunkBytes += item.bytes;
    }
    if (chunk.length > 0) await send(chunk);
  }

  /**
   * After Kafka refused a batch: one row at a time, so only the guilty rows pay. A row that
   * fails holds back the rest of its key in this batch (order per key), other keys go on.
   * A transient error stops the pass; what was sent so far is returned and marked.
   */
  async function sendRowByRow(items: Sendable[], out: PublishBatchOutput) {
    const heldKeys = new Set<string>();
    const failures: { id: number; error: string }[] = [];
    for (const item of items) {
      if (heldKeys.has(item.message.key)) continue;
      try {
        await send([item], { alone: true });
        recordPublished([item.row]);
        out.sentIds.push(item.row.id);
      } catch (err) {
        if (!isRecordRejection(err)) break;
        heldKeys.add(item.message.key);
        failures.push({ id: item.row.id, error: `kafka refused the message: ${describeError(err)}` });
      }
    }
    const { parkedIds } = await recordFailures(pool, failures, config.relay.maxAttempts);
    const parked = new Set(parkedIds);
    out.parkedIds.push(...parkedIds);
    outboxParkedTotal.inc({ reason: 'kafka_refused' }, parkedIds.length);
    out.failedIds.push(...failures.map((f) => f.id).filter((id) => !parked.has(id)));
    if (failures.length > 0) log.warn('kafka refused outbox rows', { failed: failures.length, parked: parkedIds.length, outboxIds: failures.slice(0, 20).map((f) => f.id), firstError: failures[0]!.error });
  }

  return async function publishBatch(input: PublishBatchInput): Promise<PublishBatchOutput> {
    const ctx = Context.current();
    // A relay session calls this inside its own activity and heartbeats with its own details.
    const beat = ctx.info.isLocal || ctx.info.activityType !== 'publishBatch' ? undefined : setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
    let releaseBytes = () => undefined as void;
    try {
      const out: PublishBatchOutput = { sentIds: [], parkedIds: [], failedIds: [] };
      // Bounded in bytes as well as rows; rows past the budget stay pending for the next batch.
      const { rows, parkedIds: oversizedIds, release } = await loadWithinByteBudget(pool, roundTrips, config, input.ids, bytesInFlight);
      releaseBytes = release;
      out.parkedIds.push(...oversizedIds);
      const checked: Sendable[] = [];
      const invalid: { id: number; reason: string }[] = [];
      for (const row of rows) {
        const check = toKafkaMessage(row, config.kafka.maxMessageBytes, cloudEventsOf(row));
        // issue 34 (events): with the service's catalog, a payload its type's schema refuses is parked too.
        const refused = check.ok && events ? schemaRefusal(events, row, check.message) : undefined;
        if (check.ok && refused === undefined) checked.push({ row, message: check.message, bytes: check.bytes });
        else invalid.push({ id: row.id, reason: check.ok ? refused! : check.reason });
      }
      // Schema Registry (src/formats/registry): values of registry topics framed; a payload that
      // does not fit its schema is parked with the rest; an unreachable registry throws (retried).
      const { sendable, refused } = await encodeWithRegistry(schemaRegistry, checked, topicOf, config.kafka.maxMessageBytes);
      invalid.push(...refused);
      if (invalid.length > 0) {
        // Permanent by nature (no retry fixes a payload), so parked at once with the reason.
        await parkRows(pool, invalid);
        out.parkedIds.push(...invalid.map((r) => r.id));
        outboxParkedTotal.inc({ reason: 'malformed' }, invalid.length);
        log.warn('parked malformed outbox rows', { count: invalid.length, firstId: invalid[0]!.id, outboxIds: invalid.slice(0, 20).map((r) => r.id), reason: invalid[0]!.reason });
      }
      if (sendable.length === 0) return out;
      const spans = startPublishSpans(sendable.map((s) => ({ outboxId: s.row.id, eventId: s.row.eventId!, eventType: s.row.eventType, topic: topicOf(s), message: s.message })));
      try {
        await sendAll(sendable);
        recordPublished(sendable.map((s) => s.row));
        out.sentIds.push(...sendable.map((s) => s.row.id));
      } catch (err) {
        // Unreachable broker, timeouts, leader moves: throw, Temporal retries the whole batch.
        if (!isRecordRejection(err)) {
          spans.end(new Set(), err);
          throw err;
        }
        await sendRowByRow(sendable, out).catch((e: unknown) => {
          spans.end(new Set(out.sentIds), e);
          throw e;
        });
      }
      spans.end(new Set(out.sentIds));
      clearInterval(beat);
      return out;
    } finally {
      releaseBytes();
      clearInterval(beat);
    }
  };
}

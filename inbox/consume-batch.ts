import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { Pool } from 'pg';
import type { Logger } from '../config/logger';
import { inboxParkedTotal } from '../observability/consumer-metrics';
import { APPLY_EVENTS_WORKFLOW, type ApplyEventsWorkflow } from '../workflows/inbox-contract';
import { applySearchAttributes } from './apply-search-attributes';
import { countSkippedEvents } from './count-skipped-events';
import type { EventCoalescer, RunApplyWorkflow, ChunkEvents } from './event-coalescer';
import type { HandlerRegistry } from './handler';
import { MAX_EVENT_TYPE_LENGTH } from './handler';
import { owedDeadLetterIds } from './claim-dead-letters';
import { deliverDeadLetters, type DeadLetterTarget } from './deliver-dead-letters';
import { parkEvents, type DeadLetterOriginal, type ParkedMessage } from './park-events';
import { payloadHash } from './payload-hash';
import type { ApplyChunks, OrderedCommits } from './ordered-commits';
import { TRACE_HEADERS } from '../observability/trace-context';
import { headerText, quote, validateEnvelope } from './validate-envelope';

export interface BatchHandlerDeps {
  pool: Pool;
  handlers: HandlerRegistry;
  /** What happens to an event of a type no handler knows: counted and skipped, or parked. */
  unknownEventTypes: 'skip' | 'park';
  /** Set when invalid messages are also copied to the dead-letter topic. */
  deadLetter?: DeadLetterTarget;
  logger: Logger;
  inboxName: string;
  batchSize: number;
  /** Applies chunks in order per partition and commits their offsets after the effect (applyHandedOverChunks). */
  commits: OrderedCommits<HandedOverEvents>;
  /** How many events may wait between fetch and commit before the handler stops fetching (0: none, wait for each chunk). */
  fetchAheadEvents: number;
}

export interface ChunkOutcome {
  topic: string;
  partition: number;
  firstOffset: string;
  lastOffset: string;
  valid: number;
  parked: number;
  skipped: number;
}

const RETRY_BACKOFF_MS = [200, 500, 1000, 2000, 5000];

/** Starts applyEventsWorkflow and waits for its result. */
export function applyWorkflowRunner(client: Client, taskQueue: string): RunApplyWorkflow {
  return async (workflowId, batch) => {
    const handle = await client.workflow.start<ApplyEventsWorkflow>(APPLY_EVENTS_WORKFLOW, {
      taskQueue,
      workflowId,
      // A closed run with this id (an earlier delivery of the same chunks) may run again: the
      // inbox turns it into a no-op. A still-running one (its consumer died waiting) is joined
      // instead of failing with "already started".
      workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
      // The first workflow task comes back in the start response, to this process's worker.
      requestEagerStart: true,
      // Findable in the UI by consumer, topics, partitions and offsets (inbox/apply-search-attributes.ts).
      typedSearchAttributes: applySearchAttributes(batch),
      args: [batch],
    });
    return { result: await handle.result(), eagerlyStarted: handle.eagerlyStarted };
  };
}

/**
 * kafkajs eachBatch handler. Per chunk of one partition: validate (envelope, then the handler
 * of the event's type); park the invalid; skip (or park) types no handler knows; then hand the
 * valid to the ordered-commits ledger, which applies them through the coalescer (an
 * applyEventsWorkflow shared with other partitions' chunks) after the partition's earlier
 * chunks, and commits the chunk's offset only once they are applied (inbox/ordered-commits.ts).
 * The handler returns as soon as its chunks are handed over (while fewer than
 * `fetchAheadEvents` events wait for their commit), so kafkajs fetches and we validate the next
 * events while a flight is in the air. The effect is durable in PostgreSQL before Kafka forgets
 * the messages, so a crash anywhere re-delivers (harmless: the inbox drops repeats) and never loses.
 */
export function createBatchHandler(deps: BatchHandlerDeps) {
  return async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    const generation = deps.commits.generation;
    const stillOurs = () => isRunning() && !isStale() && deps.commits.generation === generation && deps.commits.taking;
    const receivedAt = Date.now();
    for (let start = 0; start < batch.messages.length; start += deps.batchSize) {
      if (!stillOurs()) return;
      const chunk = batch.messages.slice(start, start + deps.batchSize);
      const prepared = await untilDone(deps.logger, heartbeat, stillOurs, () => prepareChunk(deps, batch.topic, batch.partition, chunk, receivedAt));
      // Stopped or lost the partition before the chunk was handed over: leave the offsets alone;
      // whoever owns the partition next starts from the last committed one.
      if (prepared === undefined) return;
      const { events, outcome } = prepared;
      const applied = deps.commits.add({
        topic: batch.topic,
        partition: batch.partition,
        lastOffset: outcome.lastOffset,
        events: chunk.length,
        item: { events, stillOurs, heartbeat },
      });
      // Moves only kafkajs's fetch position (autoCommit is off): the commit follows the effect.
      resolveOffset(outcome.lastOffset);
      if (fetchesAhead(deps, chunk.length)) {
        await whileWaiting(heartbeat, deps.commits.waitForRoom(deps.fetchAheadEvents));
      } else {
        // The next fetch only after this chunk is applied and committed.
        await whileWaiting(heartbeat, applied.then(() => deps.commits.flush()));
      }
    }
  };
}

/**
 * Fetching ahead pays when Kafka holds a backlog (full chunks: the next fetch is decoded and
 * validated while a flight is in the air, +6–12 % credits/s in `npm run bench:consumer`). A small
 * chunk means the consumer is caught up: fetching again at once then brings a few events per
 * fetch, many fetches per flight, and on a shared 2-core machine their CPU slowed the flights
 * themselves (`npm run bench:pipeline` at 1,000 events/s: commit → credited p50 116 ms against 86
 * without fetching ahead, workflow round trip p50 73 against 45 ms). So a chunk under a quarter
 * of a batch waits for its commit, as before.
 */
function fetchesAhead(deps: BatchHandlerDeps, chunkEvents: number): boolean {
  return deps.fetchAheadEvents > 0 && chunkEvents * 4 >= deps.batchSize;
}

interface PreparedChunk {
  events: ChunkEvents;
  outcome: ChunkOutcome;
}

/** A validated chunk waiting to be applied, with its eachBatch call's view of the partition. */
export interface HandedOverEvents {
  events: ChunkEvents;
  /** False once the partition is lost, the generation changed or the worker is stopping. */
  stillOurs: () => boolean;
  heartbeat: () => Promise<void>;
}

/**
 * How the ordered-commits ledger applies a partition's waiting chunks: merged into one chunk
 * (their offsets are consecutive), through the coalescer, retried while the partition is ours.
 */
export function applyHandedOverChunks(coalescer: EventCoalescer, logger: Logger): ApplyChunks<HandedOverEvents> {
  return async (items) => {
    const last = items[items.length - 1]!;
    const events = mergeChunks(items.map((i) => i.events));
    if (events.eventIds.length === 0) return true; // all parked or skipped: already durable
    if (!last.stillOurs()) return false;
    const report = await untilDone(logger, last.heartbeat, last.stillOurs, () => coalescer.submit(events));
    if (report) logger.debug({ pid: process.pid, topic: events.topic, partition: events.partition, firstOffset: events.firstOffset, lastOffset: events.lastOffset, workflowId: report.workflowId }, 'chunks applied');
    return report !== undefined;
  };
}

function mergeChunks(chunks: ChunkEvents[]): ChunkEvents {
  if (chunks.length === 1) return chunks[0]!;
  const first = chunks[0]!;
  const last = chunks[chunks.length - 1]!;
  // Received when its last piece was: the flight's log line then never shows an event "received"
  // before Kafka appended it (the latency breakdown of `npm run bench:pipeline` reads it).
  const merged: ChunkEvents = { ...first, lastOffset: last.lastOffset, receivedAt: last.receivedAt, eventIds: [], eventTypes: [], offsets: [], data: [], payloadHashes: [], traceparents: [] };
  for (const c of chunks) {
    merged.eventIds.push(...c.eventIds);
    merged.eventTypes.push(...c.eventTypes);
    merged.offsets.push(...c.offsets);
    merged.data.push(...c.data);
    merged.payloadHashes.push(...c.payloadHashes);
    merged.traceparents.push(...c.traceparents);
  }
  return merged;
}

/** Validates a chunk, parks its invalid events and counts (or parks) the types no handler knows; the valid ones are returned to apply. */
async function prepareChunk(deps: BatchHandlerDeps, topic: string, partition: number, chunk: KafkaMessage[], receivedAt: number): Promise<PreparedChunk> {
  const firstOffset = chunk[0]!.offset;
  const lastOffset = chunk[chunk.length - 1]!.offset;
  const events: ChunkEvents = { topic, partition, firstOffset, lastOffset, eventIds: [], eventTypes: [], offsets: [], data: [], payloadHashes: [], traceparents: [], receivedAt };
  const invalid: ParkedMessage[] = [];
  const unknownTypes: ParkedMessage[] = [];
  const skipped = new Map<string, number>();
  for (const message of chunk) {
    const envelope = validateEnvelope(message);
    if (!envelope.ok) {
      invalid.push({ offset: message.offset, eventId: envelope.eventId, reason: envelope.reason, rawValue: textOf(message), deadLetter: deps.deadLetter && original(deps.deadLetter.topic, message) });
      continue;
    }
    const handler = deps.handlers.get(envelope.eventType);
    if (!handler) {
      // Not malformed: another consumer may handle this type. Never dead-lettered.
      if (deps.unknownEventTypes === 'park') {
        unknownTypes.push({ offset: message.offset, eventId: envelope.eventId, reason: `no handler for event type ${quote(envelope.eventType)} in consumer ${quote(deps.inboxName)}`, rawValue: textOf(message) });
      } else {
        const type = envelope.eventType.slice(0, MAX_EVENT_TYPE_LENGTH);
        skipped.set(type, (skipped.get(type) ?? 0) + 1);
      }
      continue;
    }
    const checked = handler.validate(envelope.payload);
    if (!checked.ok) {
      invalid.push({ offset: message.offset, eventId: envelope.eventId, reason: checked.reason, rawValue: textOf(message), deadLetter: deps.deadLetter && original(deps.deadLetter.topic, message) });
      continue;
    }
    events.eventIds.push(envelope.eventId);
    events.eventTypes.push(envelope.eventType);
    events.offsets.push(message.offset);
    events.data.push(checked.data);
    events.payloadHashes.push(payloadHash(envelope.payload));
    // The relay's publish span (the event's trace), continued by the handler's span.
    events.traceparents.push(headerText(message, TRACE_HEADERS.traceparent)?.slice(0, 100) ?? null);
  }

  if (invalid.length > 0) {
    // Parked (durable) first; the dead-letter copies are owed by the parked rows from then on.
    await parkEvents(deps.pool, { consumer: deps.inboxName, topic, partition }, invalid);
    if (deps.deadLetter) await copyToDeadLetter(deps, topic, partition, invalid);
    inboxParkedTotal.inc({ handler: deps.inboxName, stage: 'validation' }, invalid.length);
    // Reasons can quote parts of a hostile payload (a JSON parse error shows its text): debug only.
    deps.logger.warn({ partition, parked: invalid.length, eventIds: invalid.slice(0, 20).map((i) => i.eventId ?? null), offsets: invalid.slice(0, 20).map((i) => i.offset) }, 'parked invalid events; reasons in `npm run outbox -- inbox parked`');
    deps.logger.debug({ partition, reasons: [...new Set(invalid.map((i) => i.reason))].slice(0, 5) }, 'parked invalid events: reasons');
  }
  if (unknownTypes.length > 0) {
    await parkEvents(deps.pool, { consumer: deps.inboxName, topic, partition }, unknownTypes);
    inboxParkedTotal.inc({ handler: deps.inboxName, stage: 'unknown_type' }, unknownTypes.length);
    deps.logger.warn({ topic, partition, parked: unknownTypes.length }, 'parked events of types no handler knows');
  }
  if (skipped.size > 0) {
    await countSkippedEvents(deps.pool, deps.inboxName, skipped);
    deps.logger.info({ topic, partition, skipped: Object.fromEntries(skipped) }, 'skipped events of types no handler knows');
  }

  const skippedCount = [...skipped.values()].reduce((a, b) => a + b, 0);
  return { events, outcome: { topic, partition, firstOffset, lastOffset, valid: events.eventIds.length, parked: invalid.length + unknownTypes.length, skipped: skippedCount } };
}

/**
 * Sends the copies these parked rows still owe, now. Whatever Kafka says, the chunk goes on: a
 * copy not written stays pending in its row for the sweep (inbox/dead-letter-sweep.ts), and a
 * copy already sent (this chunk redelivered) is not owed any more and is not sent again.
 */
async function copyToDeadLetter(deps: BatchHandlerDeps, topic: string, partition: number, invalid: ParkedMessage[]): Promise<void> {
  try {
    const ids = await owedDeadLetterIds(deps.pool, { consumer: deps.inboxName, topic, partition, offsets: invalid.map((i) => i.offset) });
    await deliverDeadLetters(deps.pool, deps.deadLetter!, { consumer: deps.inboxName, ids }, deps.logger);
  } catch (err) {
    deps.logger.warn({ err: (err as Error).message, topic, partition }, 'dead-letter copies not sent now; the sweep retries them');
  }
}

/**
 * A parked message's text. Decoded only for what gets parked: decoding every valid event's value
 * a second time (validateEnvelope has its own) was one more string per event for the collector,
 * on the event loop that is the consumer's bottleneck.
 */
function textOf(message: KafkaMessage): string | null {
  return message.value?.toString() ?? null;
}

/** What a dead-letter copy needs of the original message, byte for byte. */
function original(topic: string, message: KafkaMessage): DeadLetterOriginal {
  const headers: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(message.headers ?? {})) {
    if (value === undefined) continue;
    headers[name] = (Array.isArray(value) ? value : [value]).map((v) => Buffer.from(v).toString('base64'));
  }
  return { topic, key: message.key ?? null, value: message.value ?? null, headers };
}

/**
 * How often the group hears from us while a chunk waits (on a slow or unreachable database, a
 * busy Temporal): kafkajs sends a heartbeat at most once per heartbeatInterval however often we
 * call, so this only needs to be finer than that interval.
 */
const KEEPALIVE_HEARTBEAT_MS = 1_000;

/** Awaits `work` while heartbeating the group, so a long wait is not taken for a dead member. */
async function whileWaiting<T>(heartbeat: () => Promise<void>, work: Promise<T>): Promise<T> {
  const keepalive = setInterval(() => void heartbeat().catch(() => undefined), KEEPALIVE_HEARTBEAT_MS);
  try {
    return await work;
  } finally {
    clearInterval(keepalive);
  }
}

/**
 * Retries transient failures (Temporal or PostgreSQL unreachable) for as long as we own the
 * partition. Heartbeats the whole time — while an attempt is pending too, not only between
 * attempts: one attempt can wait far longer than the session timeout (an apply workflow retrying
 * through a PostgreSQL outage), and a member that falls silent is evicted and its partitions
 * rebalanced, again and again for as long as the outage lasts. Returns undefined when we stopped
 * owning the partition; the work is then redone by the next owner.
 */
async function untilDone<T>(logger: Logger, heartbeat: () => Promise<void>, stillOurs: () => boolean, work: () => Promise<T>): Promise<T | undefined> {
  return whileWaiting(
    heartbeat,
    (async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await work();
        } catch (err) {
          logger.warn({ err: (err as Error).message, attempt }, 'applying a chunk failed; retrying');
          await sleep(RETRY_BACKOFF_MS[Math.min(attempt, RETRY_BACKOFF_MS.length - 1)]!);
          if (!stillOurs()) return undefined;
        }
      }
    })(),
  );
}

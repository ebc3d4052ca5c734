import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowIdConflictPolicy, WorkflowIdReusePolicy, type Client } from '@temporalio/client';
import { RawValue } from '@temporalio/common';
import type { EachBatchPayload, KafkaMessage } from 'kafkajs';
import type { Pool } from 'pg';
import type { Logger } from '../config/logger';
import { inboxParkedTotal } from '../observability/consumer-metrics';
import { APPLY_EVENTS_WORKFLOW, type ApplyEventsWorkflow, type EventBatch } from '../../workflows/inbox/contract';
import { applySearchAttributes } from './apply-search-attributes';
import type { InFlightBatches } from './batch-hand-off';
import { chunkEnds, eventBytes } from './chunk-bounds';
import type { PartitionSequence } from './partition-sequence';
import { OffsetCommitGathering } from './offset-commit-gathering';
import { countSkippedEvents } from './count-skipped-events';
import type { EventCoalescer, RunApplyWorkflow, ChunkEvents } from './event-coalescer';
import type { HandlerRegistry } from './handler';
import { MAX_EVENT_TYPE_LENGTH } from './handler';
import { owedDeadLetterIds } from './claim-dead-letters';
import { deliverDeadLetters, type DeadLetterTarget } from './deliver-dead-letters';
import { parkEvents, type DeadLetterOriginal, type ParkedMessage } from './park-events';
import { payloadHash } from './payload-hash';
import { TRACE_HEADERS } from '../observability/trace-context';
import { headerText, quote, validateEnvelope } from './validate-envelope';
import { decodeFramedValues, describeFramedValue } from '../formats/registry/consumer-decoding';
import type { RegistryDecoder } from '../formats/registry/decoder';
import { isFramed } from '../formats/registry/wire-format';

export interface BatchHandlerDeps {
  pool: Pool;
  coalescer: EventCoalescer;
  handlers: HandlerRegistry;
  /** What happens to an event of a type no handler knows: counted and skipped, or parked. */
  unknownEventTypes: 'skip' | 'park';
  /** Set when invalid messages are also copied to the dead-letter topic. */
  deadLetter?: DeadLetterTarget;
  logger: Logger;
  inboxName: string;
  batchSize: number;
  /** Bound on the message bytes of one chunk (src/inbox/chunk-bounds.ts). */
  batchMaxBytes: number;
  /** Per partition, the chunks handed out: applied in order, committed in order (the worker drains it on stop). */
  sequence: PartitionSequence;
  /** Counts the consumer's group joins: a chunk of an earlier generation is not applied, retried or committed any more. */
  generation: () => number;
  /** A partition's fetch of at least this many events does not wait for its own chunks to be applied (fetching ahead). */
  fetchAheadMinEvents: number;
  /** True once the consumer is stopping: chunks not yet started are left to the next owner. */
  stopping: () => boolean;
  /**
   * Aborted when the consumer steps aside because a link is down (workers/step-aside.ts): the
   * chunks waiting are given up at once and the group hears nothing more from this member, so it
   * can leave and the next owner redeliver them (the inbox absorbs what did commit).
   */
  abandon?: AbortSignal;
  /** Decodes Schema Registry framed values (src/formats/registry); unset: such values are parked saying so. */
  schemaRegistry?: RegistryDecoder;
}

export interface ChunkOutcome {
  topic: string;
  partition: number;
  firstOffset: string;
  lastOffset: string;
  valid: number;
  parked: number;
  skipped: number;
  workflowId?: string;
  /** The partition's end when the chunk was fetched (for the lag gauge). */
  highWatermark?: string;
}

const RETRY_BACKOFF_MS = [200, 500, 1000, 2000, 5000];

/**
 * Starts applyEventsWorkflow and waits for its result. The batch is encoded here, once; with
 * `inFlight` (the one the consumer's activities read), the activity takes it from memory instead
 * of decoding that payload again.
 */
export function applyWorkflowRunner(client: Client, taskQueue: string, inFlight?: InFlightBatches): RunApplyWorkflow {
  return async (workflowId, batch) => {
    const input = new RawValue(batch);
    const release = inFlight?.hold(workflowId, input.payload, batch);
    try {
      return await startAndWait(client, taskQueue, workflowId, batch, input);
    } finally {
      release?.();
    }
  };
}

async function startAndWait(client: Client, taskQueue: string, workflowId: string, batch: EventBatch, input: RawValue<EventBatch>) {
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
    // Findable in the UI by consumer, topics, partitions and offsets (src/inbox/apply-search-attributes.ts).
    typedSearchAttributes: applySearchAttributes(batch),
    args: [input],
  });
  return { result: await handle.result(), eagerlyStarted: handle.eagerlyStarted };
}

/**
 * kafkajs eachBatch handler. Per chunk of one partition: validate (envelope, then the handler
 * of the event's type); park the invalid; skip (or park) types no handler knows; hand the valid
 * to the coalescer (an applyEventsWorkflow shared with other partitions' chunks) once the
 * partition's previous chunk is applied; commit the chunk's offsets once it is applied
 * (src/inbox/partition-sequence.ts). The effect is durable in PostgreSQL before Kafka forgets the
 * messages, so a crash anywhere re-delivers (harmless: the inbox drops repeats) and never loses.
 *
 * For a large fetch (CONSUMER_FETCH_AHEAD_MIN_EVENTS), the handler returns once this fetch's
 * chunks are validated and the partition's chunks of the previous fetch are applied, without
 * waiting for this fetch's own: kafkajs fetches again only when every partition's handler has
 * returned, so waiting for them left the consumer idle for a whole workflow round trip per
 * fetch. The fetch position moves on (resolveOffset); the committed offset does not, and kafkajs
 * commits nothing by itself (the worker runs it with autoCommit off).
 */
export function createBatchHandler(deps: BatchHandlerDeps, onChunk?: (outcome: ChunkOutcome) => void) {
  // The partitions whose chunks one flight applied commit in one request.
  const offsetCommits = new OffsetCommitGathering();
  return async function eachBatch(payload: EachBatchPayload): Promise<void> {
    const { batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale } = payload;
    const generation = deps.generation();
    const owned = () => isRunning() && !isStale() && deps.generation() === generation && !deps.abandon?.aborted;
    // A chunk not yet started when the consumer stops is left to the next owner.
    const wanted = () => owned() && !deps.stopping();
    const receivedAt = Date.now();
    const partitionKey = `${batch.topic}|${batch.partition}`;
    const previousFetch = deps.sequence.committed(partitionKey, generation);
    const commit = async (outcome: ChunkOutcome) => {
      // Applied, but no longer ours: the next owner redelivers from the committed offset.
      if (!owned()) return;
      const offset = (BigInt(outcome.lastOffset) + 1n).toString();
      try {
        await offsetCommits.commit(commitOffsetsIfNecessary, batch.topic, batch.partition, offset);
      } catch (err) {
        // The effects are already durable; the next chunk's commit covers this one, and a crash
        // before it only means a redelivery that the inbox absorbs. Usually a rebalance.
        deps.logger.warn({ err: (err as Error).message, partition: batch.partition }, 'offset commit failed; a later commit or a redelivery covers the chunk');
        return;
      }
      onChunk?.({ ...outcome, highWatermark: batch.highWatermark });
    };
    const ends = chunkEnds(batch.messages.map((m) => eventBytes(m.value)), deps.batchSize, deps.batchMaxBytes);
    await whileHeartbeating(heartbeat, deps.abandon, async () => {
      for (let i = 0, start = 0; i < ends.length; start = ends[i]!, i++) {
        const messages = batch.messages.slice(start, ends[i]);
        const chunk = await untilDone(deps.logger, wanted, () => prepareChunk(deps, batch.topic, batch.partition, messages, receivedAt));
        if (chunk === undefined) return;
        const apply = () => (wanted() ? untilDone(deps.logger, owned, () => applyChunk(deps, chunk)) : Promise.resolve(undefined));
        deps.sequence.add(partitionKey, generation, apply, commit);
        resolveOffset(messages[messages.length - 1]!.offset);
      }
      // A large fetch (a backlog) returns once the previous one is applied, so that kafkajs
      // fetches the next while this one flies; a small one (low load) is applied first. Its
      // commit is not waited for: it follows in order all the same, and kafkajs fetches again
      // meanwhile instead of after a round trip to the group coordinator.
      await (batch.messages.length >= deps.fetchAheadMinEvents ? previousFetch : deps.sequence.applied(partitionKey, generation));
    });
  };
}

/** A chunk validated, its bad events parked and its unknown types counted: what is left to apply. */
interface PreparedChunk {
  events: ChunkEvents;
  outcome: ChunkOutcome;
}

/** Hands the chunk's valid events to the coalescer; resolves once they are applied. */
async function applyChunk(deps: BatchHandlerDeps, { events, outcome }: PreparedChunk): Promise<ChunkOutcome> {
  if (events.eventIds.length === 0) return outcome;
  const report = await deps.coalescer.submit(events);
  return { ...outcome, workflowId: report.workflowId };
}

async function prepareChunk(deps: BatchHandlerDeps, topic: string, partition: number, chunk: KafkaMessage[], receivedAt: number): Promise<PreparedChunk> {
  const firstOffset = chunk[0]!.offset;
  const lastOffset = chunk[chunk.length - 1]!.offset;
  const events: ChunkEvents = { topic, partition, firstOffset, lastOffset, eventIds: [], eventTypes: [], offsets: [], data: [], payloadHashes: [], traceparents: [], bytes: 0, receivedAt };
  const invalid: ParkedMessage[] = [];
  const unknownTypes: ParkedMessage[] = [];
  const skipped = new Map<string, number>();
  // Schema Registry (src/formats/registry): framed values decoded first; undefined on plain JSON.
  const decoded = await decodeFramedValues(deps.schemaRegistry, topic, chunk);
  for (let i = 0; i < chunk.length; i++) {
    const message = chunk[i]!;
    const envelope = decoded?.[i] ?? validateEnvelope(message);
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
    // issue 34 (events): the message's headers reach validate (an event definition reads event-version).
    const checked = handler.validate(envelope.payload, { header: (name) => headerText(message, name) });
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
    // A CloudEvent written by another producer may carry it only as its tracing extension.
    events.traceparents.push((headerText(message, TRACE_HEADERS.traceparent) ?? envelope.traceparent)?.slice(0, 100) ?? null);
    events.bytes += eventBytes(message.value);
  }

  if (invalid.length > 0) {
    // Parked (durable) first; the dead-letter copies are owed by the parked rows from then on.
    await parkEvents(deps.pool, { consumer: deps.inboxName, topic, partition }, invalid);
    if (deps.deadLetter) await copyToDeadLetter(deps, topic, partition, invalid);
    inboxParkedTotal.inc({ handler: deps.inboxName, stage: 'validation' }, invalid.length);
    // Reasons can quote parts of a hostile payload (a JSON parse error shows its text): debug only.
    deps.logger.warn({ partition, parked: invalid.length, eventIds: invalid.slice(0, 20).map((i) => i.eventId ?? null), offsets: invalid.slice(0, 20).map((i) => i.offset) }, 'parked invalid events; reasons in `npx temporal-outbox inbox parked`');
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
 * copy not written stays pending in its row for the sweep (src/inbox/dead-letter-sweep.ts), and a
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
  if (message.value !== null && isFramed(message.value)) return describeFramedValue(message.value);
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

/**
 * Runs `work` while heartbeating the group — the whole time, not only between steps: a chunk can
 * wait far longer than the session timeout (an apply workflow retrying through a PostgreSQL
 * outage), and a member that falls silent is evicted and its partitions rebalanced, again and
 * again for as long as the outage lasts.
 */
async function whileHeartbeating<T>(heartbeat: () => Promise<void>, abandon: AbortSignal | undefined, work: () => Promise<T>): Promise<T | undefined> {
  const beat = () => (abandon?.aborted ? Promise.resolve() : heartbeat().catch(() => undefined));
  const keepalive = setInterval(() => void beat(), KEEPALIVE_HEARTBEAT_MS);
  let onAbandon: (() => void) | undefined;
  const abandoned = new Promise<undefined>((resolve) => {
    onAbandon = () => resolve(undefined);
    if (abandon?.aborted) resolve(undefined);
    abandon?.addEventListener('abort', onAbandon, { once: true });
  });
  try {
    // Given up when the consumer steps aside: the chunk may wait for ever on a dead link.
    return await Promise.race([work(), abandoned]);
  } finally {
    clearInterval(keepalive);
    if (onAbandon) abandon?.removeEventListener('abort', onAbandon);
    await beat();
  }
}

/**
 * Retries transient failures (Temporal or PostgreSQL unreachable) for as long as `goOn` holds
 * (we own the partition). Returns undefined when it stopped holding; the work is then redone by
 * the next owner.
 */
async function untilDone<T>(logger: Logger, goOn: () => boolean, work: () => Promise<T>): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      logger.warn({ err: (err as Error).message, attempt }, 'handling a chunk failed; retrying');
      await sleep(RETRY_BACKOFF_MS[Math.min(attempt, RETRY_BACKOFF_MS.length - 1)]!);
      if (!goOn()) return undefined;
    }
  }
}

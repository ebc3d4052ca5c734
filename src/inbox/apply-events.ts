import type { Pool } from 'pg';
import type { SqlExecutor } from '../db/executor';
import { inTransaction } from '../db/pool';
import { recordApplySpans, type EventOutcome } from '../observability/apply-spans';
import type { EventBatch, EventBatchResult } from '../../workflows/inbox/contract';
import type { AnyEventHandler, HandlerContext, HandlerRegistry, InboxEvent, Rejection } from './handler';
import { appliedPayloadHashes, deleteInboxRows, insertInboxRows } from './inbox-rows';
import { parkRejectedEvents, type RejectedEvent } from './park-rejected-events';

// The inbox guard around every handler, for a whole batch in one PostgreSQL transaction:
//   1. insert the inbox rows of the batch's ids with their payload hashes and Kafka positions
//      (first delivery of an id within the batch wins); only ids actually inserted are new, the
//      rest are duplicates and touch nothing — unless their payload differs from the applied one (or from their
//      batch-mate's): such a conflicting duplicate is parked with both versions, never absorbed;
//   2. hand the new events to their handlers, type by type (set-based when the handler can);
//   3. for events a handler refused: delete their inbox rows and park them with the reason;
// and commit. A crash anywhere rolls all of it back; the redelivery is then new again.

export class MissingHandlerError extends Error {
  override name = 'MissingHandlerError';
}

export interface AppliedBatch extends EventBatchResult {
  /** Events applied by this call, per event type (the handler metrics' label). */
  appliedByType: Record<string, number>;
}

/** `consumerGroup`: the Kafka group the batch was read by, for the spans (messaging.consumer.group.name). */
export async function applyEvents(pool: Pool, registry: HandlerRegistry, batch: EventBatch, consumerGroup?: string): Promise<AppliedBatch> {
  const startTime = new Date();
  const { result, outcomes } = await inTransaction(pool, (tx) => applyEventsInTransaction(tx, registry, batch));
  // After COMMIT: a span says the effect is durable (or why it was not applied), never a rolled-back attempt.
  recordApplySpans(batch, outcomes, startTime, consumerGroup);
  const appliedByType: Record<string, number> = {};
  outcomes.forEach((o, i) => {
    if (o === 'applied') appliedByType[batch.eventTypes[i]!] = (appliedByType[batch.eventTypes[i]!] ?? 0) + 1;
  });
  return { ...result, appliedByType };
}

/**
 * The same guard inside the caller's transaction (a redrive locks its parked rows in the same
 * one); returns what happened to each event, for spans the caller records after its COMMIT.
 */
export async function applyEventsInTransaction(
  tx: SqlExecutor,
  registry: HandlerRegistry,
  batch: EventBatch,
): Promise<{ result: EventBatchResult; outcomes: EventOutcome[] }> {
  const first = new Map<string, number>();
  const conflicts: RejectedEvent[] = [];
  batch.eventIds.forEach((id, i) => {
    const f = first.get(id);
    if (f === undefined) first.set(id, i);
    else if (batch.payloadHashes[i] !== batch.payloadHashes[f]) {
      // The same id twice in one batch with different payloads: the first one goes on, this one
      // is parked beside it (an identical repeat is a plain duplicate).
      conflicts.push({
        ...parkedAt(batch, i, `conflicting duplicate: event id delivered again in this batch (first at ${batch.topics[batch.topicIndex[f]!]}/${batch.partitions[f]}@${batch.offsets[f]}) with a different payload`),
        appliedValue: describe(batch, f),
        appliedPayloadHash: batch.payloadHashes[f],
      });
    }
  });
  const unknown = [...new Set(batch.eventTypes)].filter((t) => registry.get(t) === undefined);
  if (unknown.length > 0) throw new MissingHandlerError(`no handler for event type(s) ${unknown.map((t) => JSON.stringify(t)).join(', ')} on this worker`);

  const ctx: HandlerContext = { consumer: batch.consumer };
  const ids = [...first.keys()];
  const fresh = await insertInboxRows(
    tx,
    batch.consumer,
    batch.topics,
    [...first].map(([eventId, i]) => ({ eventId, payloadHash: batch.payloadHashes[i]!, topicIndex: batch.topicIndex[i]!, partition: batch.partitions[i]!, offset: batch.offsets[i]! })),
  );
  // A redelivery of an applied id is a no-op only if its payload is the applied one.
  const applied = await appliedPayloadHashes(tx, batch.consumer, ids.filter((id) => !fresh.has(id)));
  for (const [eventId, appliedHash] of applied) {
    const i = first.get(eventId)!;
    if (appliedHash === batch.payloadHashes[i]) continue;
    conflicts.push({
      ...parkedAt(batch, i, `conflicting duplicate: event id already applied with a different payload (applied payload hash ${appliedHash}, this one ${batch.payloadHashes[i]})`),
      appliedPayloadHash: appliedHash,
    });
  }
  const byType = new Map<string, InboxEvent<unknown>[]>();
  for (const [eventId, i] of first) {
    if (!fresh.has(eventId)) continue;
    const event: InboxEvent<unknown> = {
      eventId,
      eventType: batch.eventTypes[i]!,
      data: batch.data[i],
      topic: batch.topics[batch.topicIndex[i]!]!,
      partition: batch.partitions[i]!,
      offset: batch.offsets[i]!,
    };
    const list = byType.get(event.eventType) ?? [];
    list.push(event);
    byType.set(event.eventType, list);
  }

  const rejected: RejectedEvent[] = [];
  for (const type of [...byType.keys()].sort()) {
    const events = byType.get(type)!;
    const refusals = await applyWithHandler(tx, registry.get(type)!, events, ctx);
    const byId = new Map(events.map((e) => [e.eventId, e]));
    for (const r of refusals) {
      const e = byId.get(r.eventId);
      if (!e) continue;
      rejected.push({
        topic: e.topic,
        partition: e.partition,
        offset: e.offset,
        eventId: e.eventId,
        reason: r.reason,
        rawValue: JSON.stringify({ event_id: e.eventId, type: e.eventType, data: e.data }),
        // Kept so that `inbox redrive` can apply it once the cause is fixed.
        event: { eventType: e.eventType, data: e.data, payloadHash: batch.payloadHashes[first.get(e.eventId)!]! },
      });
    }
  }
  if (rejected.length > 0) await deleteInboxRows(tx, batch.consumer, rejected.map((r) => r.eventId));
  await parkRejectedEvents(tx, batch.consumer, [...rejected, ...conflicts]);
  return {
    result: {
      applied: fresh.size - rejected.length,
      duplicates: batch.eventIds.length - fresh.size - conflicts.length,
      rejected: rejected.length,
      conflicts: conflicts.length,
    },
    outcomes: outcomesOf(batch, first, fresh, rejected, conflicts),
  };
}

/** What happened to each event of the batch, index-aligned. */
function outcomesOf(batch: EventBatch, first: Map<string, number>, fresh: Set<string>, rejected: RejectedEvent[], conflicts: RejectedEvent[]): EventOutcome[] {
  const refused = new Set(rejected.map((r) => r.eventId));
  const conflicting = new Set(conflicts.map((c) => `${c.eventId}@${c.topic}/${c.partition}/${c.offset}`));
  return batch.eventIds.map((id, i) => {
    if (conflicting.size > 0 && conflicting.has(`${id}@${batch.topics[batch.topicIndex[i]!]}/${batch.partitions[i]}/${batch.offsets[i]}`)) return 'conflict';
    if (first.get(id) !== i || !fresh.has(id)) return 'duplicate';
    return refused.has(id) ? 'rejected' : 'applied';
  });
}

/** Where event i sits, with a reason, its version as parked evidence. */
function parkedAt(batch: EventBatch, i: number, reason: string): RejectedEvent {
  return { topic: batch.topics[batch.topicIndex[i]!]!, partition: batch.partitions[i]!, offset: batch.offsets[i]!, eventId: batch.eventIds[i]!, reason, rawValue: describe(batch, i) };
}

function describe(batch: EventBatch, i: number): string {
  return JSON.stringify({ event_id: batch.eventIds[i], type: batch.eventTypes[i], data: batch.data[i], payload_hash: batch.payloadHashes[i] });
}

async function applyWithHandler(tx: SqlExecutor, handler: AnyEventHandler, events: InboxEvent<unknown>[], ctx: HandlerContext): Promise<Rejection[]> {
  if (handler.applyBatch) {
    await tx.query('SAVEPOINT handler_batch');
    try {
      const result = await handler.applyBatch(tx, events, ctx);
      await tx.query('RELEASE SAVEPOINT handler_batch');
      return result?.rejected ?? [];
    } catch (err) {
      if (!isPermanentSqlError(err)) throw err;
      // One bad event spoils a set-based statement for all: find it by going one at a time.
      await tx.query('ROLLBACK TO SAVEPOINT handler_batch');
    }
  }
  const rejected: Rejection[] = [];
  for (const event of events) {
    await tx.query('SAVEPOINT handler_event');
    try {
      const result = await handler.apply(tx, event, ctx);
      if (result && typeof result === 'object' && 'rejected' in result) {
        await tx.query('ROLLBACK TO SAVEPOINT handler_event');
        rejected.push({ eventId: event.eventId, reason: result.rejected });
      } else {
        await tx.query('RELEASE SAVEPOINT handler_event');
      }
    } catch (err) {
      if (!isPermanentSqlError(err)) throw err;
      await tx.query('ROLLBACK TO SAVEPOINT handler_event');
      rejected.push({ eventId: event.eventId, reason: `${handler.eventType} handler failed: ${(err as Error).message}` });
    }
  }
  return rejected;
}

/**
 * SQLSTATE class 22 (data exception: out of range, invalid text) and 23 (integrity constraint
 * violation) come from the event itself; retrying cannot fix them. Everything else (connection
 * lost, serialization failure, lock timeout) may pass and is retried.
 */
export function isPermanentSqlError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^2[23]/.test(code);
}

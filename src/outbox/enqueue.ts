import { randomUUID } from 'node:crypto';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { inSchema } from '../db/schema';
import { activeSpanContext, headersFromContext, outboxTracer, TRACE_HEADERS } from '../observability/trace-context';
// issue 34 (events): the typed form of enqueue.
import type { z } from 'zod';
import { isEventDefinition, type AnyEventDefinition, type EventDefinition } from '../events/define-event';
import { prepareEvent, type EventEnqueueOptions, type EventPayload } from '../events/prepare-enqueue';

/**
 * Transaction-scoped advisory lock space for "one key's events take ids in commit order".
 * The two-int form keeps it apart from the single-bigint locks (the migration runner's).
 */
export const KEY_ORDER_LOCK_CLASS = 0x0b0e;

export interface EnqueueInput {
  eventType: string;
  /** A JSON object; `event_id` (string) is generated when absent. */
  payload: Record<string, unknown>;
  /**
   * Kafka key and shard key; defaults to the payload field recorded as the key field at setup
   * (`migrate --key-field`), else the event id, as the table does for a row inserted by plain SQL.
   */
  key?: string;
  /**
   * Copied to the Kafka message. A `traceparent` (W3C trace context) given here is the event's
   * trace; without one, enqueue records the caller's active OpenTelemetry span (through an
   * `outbox enqueue` span of its own), so relay and consumer continue that trace.
   */
  headers?: Record<string, string>;
  /**
   * Serialise this key's producers (default true): the lock is taken before the row gets its
   * id and held to COMMIT, so for one key id order equals commit order and the relay, which
   * publishes in id order, publishes in commit order. Costs: same-key transactions wait for
   * each other, and a transaction enqueueing several keys should enqueue them in a stable
   * order (as with row locks) to avoid deadlocks.
   */
  serializeKey?: boolean;
}

/**
 * What enqueue writes with: anything with a pg-style `query(text, values)` that resolves to the
 * rows. A pg Pool or client fits as it is; a query builder's transaction fits through a
 * three-line adapter (docs/adopting.md: Kysely, Knex), which returns its own result type, hence
 * no more than `rows` asked of it.
 */
export interface EnqueueExecutor {
  query(text: string, values: unknown[]): PromiseLike<{ rows: unknown[] }>;
}

export interface EnqueueOptions {
  /** The library's schema, when not the default temporal_outbox (src/db/schema.ts). */
  schema?: string;
}

export interface EnqueueResult {
  id: number;
  eventId: string;
}

export class EnqueueValidationError extends Error {
  override name = 'EnqueueValidationError';
}

// One statement, one round trip. The CTE runs first (a CTE calling a volatile function is
// materialised), so the identity default (nextval) is evaluated only once this transaction holds
// the key's lock. The key is the one the table's key trigger would give the row (migrations/0053),
// written with the row, and the lock hashes what its shard_hash column hashes, so lock, shard and
// Kafka key always agree.
const ENQUEUE_SQL = `
  WITH keyed AS (
    SELECT coalesce($3::text, $2::jsonb ->> temporal_outbox.outbox_key_field()) AS event_key
  ), key_lock AS (
    SELECT event_key,
           CASE WHEN $5::boolean
             THEN pg_advisory_xact_lock($6::int, hashtext(coalesce(event_key, $2::jsonb ->> 'event_id', '')))
           END AS locked
      FROM keyed
  )
  INSERT INTO temporal_outbox.outbox_events (event_type, payload, event_key, headers)
  SELECT $1::text, $2::jsonb, event_key, $4::jsonb FROM key_lock
  RETURNING id`;

/**
 * Inserts one outbox event with the caller's executor, i.e. inside the caller's transaction:
 * it commits or rolls back together with the business change it describes.
 *
 * Typed form (issue 34, src/events/): `enqueue(tx, OrderPlaced, payload, options?)` with an
 * event definition (defineEvent): the compiler checks the payload against the schema, and a
 * payload the schema refuses throws EnqueueValidationError with the schema's message.
 */
export function enqueue<S extends z.ZodObject>(db: EnqueueExecutor, event: EventDefinition<S>, payload: EventPayload<S>, options?: EventEnqueueOptions): Promise<EnqueueResult>;
export function enqueue(db: EnqueueExecutor, input: EnqueueInput, options?: EnqueueOptions): Promise<EnqueueResult>;
export async function enqueue(db: EnqueueExecutor, inputOrEvent: EnqueueInput | AnyEventDefinition, ...rest: unknown[]): Promise<EnqueueResult> {
  if (isEventDefinition(inputOrEvent)) {
    const options = (rest[1] ?? {}) as EventEnqueueOptions;
    const prepared = prepareEvent(inputOrEvent, rest[0] as EventPayload<z.ZodObject>, options);
    if (!prepared.ok) throw new EnqueueValidationError(prepared.reason);
    return enqueue(db, prepared.input, options.schema === undefined ? {} : { schema: options.schema });
  }
  const input = inputOrEvent;
  const options = (rest[0] ?? {}) as EnqueueOptions;
  const payload = validate(input);
  const sql = inSchema(ENQUEUE_SQL, options.schema);
  const eventId = payload.event_id as string;
  const insert = async (headers: Record<string, string>) => {
    const { rows } = await db.query(sql, [
      input.eventType,
      JSON.stringify(payload),
      input.key ?? null,
      JSON.stringify(headers),
      input.serializeKey !== false,
      KEY_ORDER_LOCK_CLASS,
    ]);
    return { id: Number((rows[0] as { id: string }).id), eventId };
  };
  const headers = input.headers ?? {};
  // No active span (tracing off, or the caller traces nothing): the row carries no trace.
  const active = context.active();
  if (headers[TRACE_HEADERS.traceparent] !== undefined || activeSpanContext(active) === undefined) return insert(headers);
  const span = outboxTracer().startSpan(
    `outbox enqueue ${input.eventType}`,
    { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'outbox', 'messaging.operation.type': 'create', 'messaging.message.id': eventId, 'outbox.event_type': input.eventType } },
    active,
  );
  try {
    const result = await insert({ ...headers, ...headersFromContext(trace.setSpan(active, span)) });
    span.setAttribute('outbox.id', result.id);
    return result;
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}

function validate(input: EnqueueInput): Record<string, unknown> {
  if (typeof input.eventType !== 'string' || input.eventType.trim() === '') throw new EnqueueValidationError('eventType must be a non-empty string');
  if (input.payload === null || typeof input.payload !== 'object' || Array.isArray(input.payload)) {
    throw new EnqueueValidationError('payload must be a JSON object');
  }
  if (input.key !== undefined && (typeof input.key !== 'string' || input.key === '')) throw new EnqueueValidationError('key must be a non-empty string when given');
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    if (typeof value !== 'string') throw new EnqueueValidationError(`header ${name} must be a string`);
  }
  const eventId = input.payload.event_id;
  if (eventId !== undefined && (typeof eventId !== 'string' || eventId === '')) throw new EnqueueValidationError('payload.event_id must be a non-empty string when given');
  return eventId === undefined ? { event_id: randomUUID(), ...input.payload } : input.payload;
}

import type { SqlExecutor } from '../db/executor';

// The public shape of a consumer: one handler per event type. The library owns everything
// around a handler — Kafka, the inbox guard, the transaction, parking, Temporal — so a handler
// only says what a valid event looks like and what applying one does to the database.

/** What a handler's `validate` returns: the event's data (JSON-serialisable), or why it is bad. */
export type Validation<T> = { ok: true; data: T } | { ok: false; reason: string };

/**
 * What `validate` may read of the message beside its payload (issue 34: an event definition's
 * handler reads the `event-version` header, src/events/version-header.ts).
 */
export interface ValidationContext {
  /** A header's (first) value as text; undefined when the message has none. */
  header(name: string): string | undefined;
}

/** One event as a handler sees it, after the envelope and the handler's own validation passed. */
export interface InboxEvent<T> {
  eventId: string;
  eventType: string;
  data: T;
  topic: string;
  partition: number;
  offset: string;
}

export interface HandlerContext {
  /** The inbox identity applying this event (INBOX_CONSUMER). */
  consumer: string;
}

/** An event the handler refuses for good (a missing row, a broken business rule): parked with the reason. */
export interface Rejection {
  eventId: string;
  reason: string;
}

export interface EventHandler<T = unknown> {
  /** The `type` (payload field or event-type header) this handler applies. */
  eventType: string;
  /**
   * Checks the event's payload (a JSON object whose event_id and type are already checked) and
   * returns the data `apply` needs. Runs in the consumer process; the data travels through
   * Temporal history, so keep it small and JSON-serialisable. A bad payload is parked with the
   * reason and copied to the dead-letter topic; it never reaches `apply`.
   */
  validate(payload: Record<string, unknown>, context?: ValidationContext): Validation<T>;
  /**
   * Applies one event inside the library's transaction, after the inbox row for it was inserted
   * (so it runs at most once per consumer). Return `{ rejected: reason }` to park the event
   * instead (its inbox row and any effect are rolled back). A PostgreSQL data or constraint
   * error (SQLSTATE class 22 or 23) parks the event the same way; any other error rolls the
   * batch back and Temporal retries it.
   */
  apply(tx: SqlExecutor, event: InboxEvent<T>, ctx: HandlerContext): Promise<void | { rejected: string }>;
  /**
   * Optional set-based path: applies many fresh events (inbox rows already inserted) in a few
   * statements. Must leave the events it returns as rejected untouched. When it fails with a
   * data or constraint error, the library falls back to `apply` one event at a time.
   */
  applyBatch?(tx: SqlExecutor, events: InboxEvent<T>[], ctx: HandlerContext): Promise<void | { rejected: Rejection[] }>;
}

/** A handler of any data type: a consumer registers handlers of different types side by side. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the data type is each handler's own business
export type AnyEventHandler = EventHandler<any>;

export const MAX_EVENT_TYPE_LENGTH = 200;

/** Declares a handler; checks its shape once, at start-up, instead of at the first event. */
export function defineHandler<T>(handler: EventHandler<T>): EventHandler<T> {
  if (typeof handler.eventType !== 'string' || handler.eventType.trim() === '' || handler.eventType.length > MAX_EVENT_TYPE_LENGTH) {
    throw new TypeError(`a handler's eventType must be a non-empty string of at most ${MAX_EVENT_TYPE_LENGTH} characters`);
  }
  if (typeof handler.validate !== 'function') throw new TypeError(`handler ${handler.eventType}: validate must be a function`);
  if (typeof handler.apply !== 'function') throw new TypeError(`handler ${handler.eventType}: apply must be a function`);
  if (handler.applyBatch !== undefined && typeof handler.applyBatch !== 'function') {
    throw new TypeError(`handler ${handler.eventType}: applyBatch must be a function when given`);
  }
  return handler;
}

/** The handlers of one consumer, by event type; two handlers for one type are refused. */
export class HandlerRegistry {
  private readonly byType = new Map<string, AnyEventHandler>();

  constructor(handlers: readonly AnyEventHandler[]) {
    if (handlers.length === 0) throw new TypeError('a consumer needs at least one handler');
    for (const h of handlers) {
      if (this.byType.has(h.eventType)) throw new TypeError(`two handlers for event type ${h.eventType}`);
      this.byType.set(h.eventType, h);
    }
  }

  get(eventType: string): AnyEventHandler | undefined {
    return this.byType.get(eventType);
  }

  eventTypes(): string[] {
    return [...this.byType.keys()].sort();
  }
}

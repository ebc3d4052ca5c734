import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { EventDefinition } from './define-event';
import { checkVersion, dataOf } from './read-event';
import { EVENT_VERSION_HEADER } from './version-header';

/** A typed event's payload as a producer writes it: the schema's input, and optionally its own event id. */
export type EventPayload<S extends z.ZodObject> = z.input<S> & { event_id?: string };

export interface EventEnqueueOptions {
  /** The Kafka and shard key; default the definition's key function, else as for an untyped enqueue. */
  key?: string;
  headers?: Record<string, string>;
  serializeKey?: boolean;
  /** The library's schema, when not the default temporal_outbox. */
  schema?: string;
}

/** What enqueue then writes, like an untyped enqueue's input. */
export interface PreparedEvent {
  eventType: string;
  payload: Record<string, unknown>;
  key?: string;
  headers: Record<string, string>;
  serializeKey?: boolean;
}

export type Prepared = { ok: true; input: PreparedEvent } | { ok: false; reason: string };

/**
 * The row a typed enqueue writes: the payload as given (not the schema's output: a default or a
 * transform belongs to the reader) once the schema accepts it, with `type` and an `event_id`
 * filled in, and the version in the `event-version` header.
 */
export function prepareEvent<S extends z.ZodObject>(definition: EventDefinition<S>, payload: EventPayload<S>, options: EventEnqueueOptions = {}): Prepared {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return { ok: false, reason: 'payload must be a JSON object' };
  const given = payload as Record<string, unknown>;
  if (given.type !== undefined && given.type !== definition.type) {
    return { ok: false, reason: `payload.type ${JSON.stringify(given.type)} is not the event's type ${JSON.stringify(definition.type)}` };
  }
  const checked = checkVersion(definition.type, definition.versions[definition.versions.length - 1]!, dataOf(given));
  if (!checked.ok) return checked;
  const key = options.key ?? definition.key?.(payload);
  return {
    ok: true,
    input: {
      eventType: definition.type,
      payload: { event_id: given.event_id ?? randomUUID(), type: definition.type, ...dataOf(given) },
      ...(key === undefined ? {} : { key }),
      headers: { ...options.headers, [EVENT_VERSION_HEADER]: String(definition.version) },
      ...(options.serializeKey === undefined ? {} : { serializeKey: options.serializeKey }),
    },
  };
}

import type { AnyEventDefinition } from '../events/define-event';
import type { AnyEventHandler } from '../inbox/handler';

/**
 * What a service describes itself with: the module `temporal-outbox asyncapi --module <path>`
 * loads exports one of these as `asyncApi` (or as its default export). The topics come from the
 * settings (kafka.topic, kafka.routes), as the relay and the consumer route them.
 */
export interface AsyncApiSource {
  /** The event types the service produces (send operations): every version of each is a message. */
  events: readonly AnyEventDefinition[];
  /** The handlers of its consumer (receive operations). A handler of a type not in `events` gets a message without a schema. */
  handlers?: readonly AnyEventHandler[];
  info?: { title: string; version: string; description?: string };
}

export function isAsyncApiSource(value: unknown): value is AsyncApiSource {
  return typeof value === 'object' && value !== null && Array.isArray((value as { events?: unknown }).events);
}

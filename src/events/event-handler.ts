import type { z } from 'zod';
import { defineHandler, type EventHandler, type HandlerContext, type InboxEvent, type Rejection, type Validation } from '../inbox/handler';
import type { SqlExecutor } from '../db/executor';
import type { AnyEventDefinition, EventDefinition } from './define-event';
import { readAs } from './read-event';
import { EVENT_VERSION_HEADER } from './version-header';

/** The data a handler of this definition receives: its schema's output. */
export type EventData<S extends z.ZodObject> = z.output<S>;

export interface EventHandlerSpec<S extends z.ZodObject> {
  /**
   * Checks beyond the schema that depend on the consumer, not the type (a limit from its
   * settings); runs after the schema and the upcast. A refusal parks the event with its reason.
   */
  check?(data: EventData<S>): Validation<EventData<S>>;
  apply(tx: SqlExecutor, event: InboxEvent<EventData<S>>, ctx: HandlerContext): Promise<void | { rejected: string }>;
  applyBatch?(tx: SqlExecutor, events: InboxEvent<EventData<S>>[], ctx: HandlerContext): Promise<void | { rejected: Rejection[] }>;
}

/** A handler made from an event definition: the AsyncAPI document reads the definition it receives. */
export interface DefinedEventHandler<S extends z.ZodObject> extends EventHandler<EventData<S>> {
  readonly definition: EventDefinition<S>;
}

/**
 * The handler of an event type at the definition's version: its validate is the schema (older
 * versions upcast, src/events/read-event.ts), so `apply` gets typed data the schema accepted.
 * A payload the schema refuses is parked with the schema's message, as any invalid event is.
 */
export function defineEventHandler<S extends z.ZodObject>(definition: EventDefinition<S>, spec: EventHandlerSpec<S>): DefinedEventHandler<S> {
  const handler = defineHandler<EventData<S>>({
    eventType: definition.type,
    validate(payload, context) {
      const read = readAs(definition, context?.header(EVENT_VERSION_HEADER), payload);
      return read.ok && spec.check ? spec.check(read.data) : read;
    },
    apply: spec.apply,
    ...(spec.applyBatch ? { applyBatch: spec.applyBatch } : {}),
  });
  return Object.assign(handler, { definition });
}

export function definitionOfHandler(handler: EventHandler<unknown>): AnyEventDefinition | undefined {
  return (handler as Partial<DefinedEventHandler<z.ZodObject>>).definition;
}

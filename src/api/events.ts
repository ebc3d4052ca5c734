// Public API: event types declared once (docs/events.md). A definition gives the typed enqueue
// (`enqueue(tx, OrderPlaced, payload)`), the typed handler (defineEventHandler), the relay's
// check of plain-SQL rows (the relay worker's `events` option) and the AsyncAPI document.
export { defineEvent, EventCompatibilityError, type AnyEventDefinition, type DefineEventSpec, type EventDefinition, type EvolveSpec } from '../events/define-event';
export type { CompatibilityMode } from '../events/compatibility';
export { defineEventCatalog, type EventCatalog } from '../events/catalog';
export { defineEventHandler, type DefinedEventHandler, type EventData, type EventHandlerSpec } from '../events/event-handler';
export type { EventEnqueueOptions, EventPayload } from '../events/prepare-enqueue';
export { EVENT_VERSION_HEADER } from '../events/version-header';
export type { JsonSchema } from '../events/json-schema';
// The AsyncAPI 3.0 document (`npx temporal-outbox asyncapi --module <your module>`).
export type { AsyncApiSource } from '../asyncapi/source';
export { buildAsyncApiDocument } from '../asyncapi/build-document';
export type { AsyncApiExtension, MessageContext } from '../asyncapi/extensions';

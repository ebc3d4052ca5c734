import type { AnyEventDefinition } from '../../events/define-event';
import type { EventCatalog } from '../../events/catalog';
import { messagePayloadSchema } from '../../events/message-schema';
import { checkVersion, dataOf } from '../../events/read-event';
import { SchemaCatalog, type EventSchema } from './catalog';

/**
 * The registry schemas of a service's event types: each version of each type as a JSON Schema
 * entry (the value with its envelope fields, as the AsyncAPI document describes it), checked by
 * that version's own schema. What the relay registers under a `json-schema` topic's subject when
 * it is given the types (`runRelayWorker(config, { events })`, `relay worker --events`), so a
 * topic carries the ids of the schemas the service declares, not whatever a subject holds last.
 * A version that declares its Avro record (`avroSchema`) has it registered for `avro` topics;
 * one that does not leaves such a topic to its subject's latest schema.
 */
export function schemaCatalogFromEvents(events: EventCatalog | readonly AnyEventDefinition[]): SchemaCatalog {
  const definitions = Array.isArray(events) ? (events as readonly AnyEventDefinition[]) : (events as EventCatalog).definitions();
  const catalog = new SchemaCatalog();
  for (const definition of definitions) {
    for (const v of definition.versions) {
      const entry: EventSchema = {
        eventType: definition.type,
        version: v.version,
        jsonSchema: messagePayloadSchema(definition.type, v),
        ...(v.avroSchema === undefined ? {} : { avroSchema: v.avroSchema }),
        validate: (payload) => {
          const checked = checkVersion(definition.type, v, dataOf(payload));
          return checked.ok ? undefined : checked.reason;
        },
      };
      catalog.register(entry);
    }
  }
  return catalog;
}

import type { Config } from '../config/resolve';
import type { AnyEventDefinition } from '../events/define-event';
import type { SubjectNaming } from '../formats/registry/settings';

/** What an extension is told about each message it may add to. */
export interface MessageContext {
  definition: AnyEventDefinition | undefined;
  eventType: string;
  version: number | undefined;
  topic: string;
}

/**
 * A part of the document that depends on how messages are encoded on a topic. Returned objects
 * are merged into the message (`bindings`, `headers` properties, `contentType`, `traits`...).
 */
export interface AsyncApiExtension {
  message?(context: MessageContext, message: Record<string, unknown>): Record<string, unknown> | undefined;
}

/**
 * The extensions the settings ask for: the Schema Registry (kafka.schemaRegistry) on the topics it
 * encodes, CloudEvents (kafka.cloudEvents) on the topics written in either content mode. Plain
 * JSON adds nothing. resolveConfig refuses a topic listed for both, so at most one applies.
 */
export function formatExtensions(config: Config): AsyncApiExtension[] {
  return [registryExtension(config), cloudEventsExtension(config)];
}

// The Kafka message binding (0.5.0) says where a registry-aware reader finds the schema id and
// how the subject is looked up; the names are the binding's own for each subject naming.
const LOOKUP_STRATEGY: Record<SubjectNaming, string> = { topic: 'TopicIdStrategy', record: 'RecordIdStrategy', 'topic-record': 'TopicRecordIdStrategy' };

// AsyncAPI's multi-format schema for an Avro record: readers with the Avro schema parser
// (@asyncapi/avro-schema-parser) read it as Avro, as a registry-aware consumer would.
const AVRO_SCHEMA_FORMAT = 'application/vnd.apache.avro+json;version=1.9.0';

function registryExtension(config: Config): AsyncApiExtension {
  return {
    message({ topic, definition, version }, message) {
      const registry = config.kafka.schemaRegistry;
      const format = registry?.topics[topic];
      if (registry === undefined || format === undefined) return undefined;
      const kafka = ((message.bindings as { kafka?: Record<string, unknown> } | undefined)?.kafka ?? { bindingVersion: '0.5.0' });
      // The version's own Avro record is what the relay registers for it on an Avro topic; without
      // one the relay writes with the subject's latest schema, which only the registry knows, so
      // the document keeps the payload's JSON Schema (the decoded value). A copy: the document is
      // the caller's to change, the type's record is not.
      const avroSchema = format === 'avro' ? definition?.versions.find((v) => v.version === version)?.avroSchema : undefined;
      return {
        contentType: format === 'avro' ? 'application/vnd.apache.avro+binary' : 'application/json',
        ...(avroSchema === undefined ? {} : { payload: { schemaFormat: AVRO_SCHEMA_FORMAT, schema: structuredClone(avroSchema) } }),
        bindings: { kafka: { ...kafka, schemaIdLocation: 'payload', schemaIdPayloadEncoding: 'confluent', schemaLookupStrategy: LOOKUP_STRATEGY[registry.subjectNaming] } },
        description: avroSchema === undefined
          ? `Value in the Confluent Schema Registry wire format (${format}): magic byte 0, the 4-byte schema id, then the body; the payload schema below is the decoded value.`
          : 'Value in the Confluent Schema Registry wire format (avro): magic byte 0, the 4-byte schema id, then the Avro binary body of the record below.',
      };
    },
  };
}

function cloudEventsExtension(config: Config): AsyncApiExtension {
  return {
    message({ topic, eventType }, message) {
      const ce = config.kafka.cloudEvents;
      const mode = ce.topics[topic];
      if (mode === undefined) return undefined;
      if (mode === 'structured') {
        // The value is the CloudEvents JSON envelope; the event's own schema is its `data`.
        return {
          contentType: 'application/cloudevents+json; charset=UTF-8',
          payload: {
            type: 'object',
            required: ['specversion', 'id', 'source', 'type', 'data'],
            properties: { ...attributeSchemas(ce.source, eventType), datacontenttype: { type: 'string', const: 'application/json' }, data: message.payload },
          },
        };
      }
      const headers = (message.headers ?? { type: 'object', properties: {} }) as { type: string; properties: Record<string, unknown>; required?: string[] };
      const ceHeaders = Object.fromEntries(Object.entries(attributeSchemas(ce.source, eventType)).map(([name, schema]) => [`ce_${name}`, schema]));
      return {
        headers: {
          ...headers,
          properties: { ...headers.properties, ...ceHeaders, 'content-type': { type: 'string', const: 'application/json' } },
          required: [...(headers.required ?? []), 'ce_specversion', 'ce_id', 'ce_source', 'ce_type'],
        },
      };
    },
  };
}

/** The CloudEvents context attributes the relay writes (docs/formats.md#cloudevents). */
function attributeSchemas(source: string, eventType: string): Record<string, unknown> {
  return {
    specversion: { type: 'string', const: '1.0' },
    id: { type: 'string', description: 'The event id' },
    source: { type: 'string', description: `The producing service (default ${source})` },
    type: { type: 'string', const: eventType },
    time: { type: 'string', format: 'date-time', description: "The outbox row's created_at" },
    subject: { type: 'string', description: 'The event key, when CLOUDEVENTS_SUBJECT=key' },
    dataschema: { type: 'string', format: 'uri' },
  };
}

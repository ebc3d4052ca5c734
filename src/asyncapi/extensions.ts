import type { Config } from '../config/resolve';
import type { AnyEventDefinition } from '../events/define-event';

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
 * The extensions the settings ask for: the hook where the Schema Registry (kafka.schemaRegistry:
 * the Kafka message binding's schemaIdLocation / schemaIdPayloadEncoding, the Confluent content
 * type) and CloudEvents (kafka.cloudEvents: the ce_* headers, structured mode's content type)
 * add their parts to each message of the topics they apply to. Plain JSON adds nothing.
 */
export function formatExtensions(_config: Config): AsyncApiExtension[] {
  return [];
}

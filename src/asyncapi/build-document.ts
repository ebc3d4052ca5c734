import type { Config } from '../config/resolve';
import { definitionOfHandler } from '../events/event-handler';
import type { AnyEventDefinition, EventVersion } from '../events/define-event';
import { envelopeProperties, messagePayloadSchema } from '../events/message-schema';
import { EVENT_VERSION_HEADER } from '../events/version-header';
import { HEADERS } from '../kafka/message-format';
import { topicForEventType } from '../kafka/topics';
import { formatExtensions, type AsyncApiExtension } from './extensions';
import type { AsyncApiSource } from './source';

// An AsyncAPI 3.0 document of what a service puts on Kafka and reads from it: channels are the
// topics (kafka.topic and kafka.routes), messages are event types at each of their versions with
// the payload's JSON Schema, operations are the service's sends (its event types) and receives
// (its handlers). Deterministic: the same source and settings give the same text, so a
// committed copy can be compared with a fresh one.

type Doc = Record<string, unknown>;

interface MessageEntry {
  id: string;
  eventType: string;
  version: number | undefined;
  topic: string;
  body: Doc;
}

export function buildAsyncApiDocument(source: AsyncApiSource, config: Config, extensions: AsyncApiExtension[] = formatExtensions(config)): Doc {
  const definitions = new Map<string, AnyEventDefinition>();
  for (const d of source.events) if ((definitions.get(d.type)?.version ?? 0) < d.version) definitions.set(d.type, d);
  for (const h of source.handlers ?? []) {
    const d = definitionOfHandler(h);
    if (d && (definitions.get(d.type)?.version ?? 0) < d.version) definitions.set(d.type, d);
  }
  const handled = [...new Set((source.handlers ?? []).map((h) => h.eventType))].sort();
  const produced = [...new Set(source.events.map((d) => d.type))].sort();
  const types = [...new Set([...produced, ...handled])].sort();

  const messages = new Map<string, MessageEntry[]>();
  for (const type of types) {
    const topic = topicForEventType(config.kafka, type);
    const definition = definitions.get(type);
    const entries: MessageEntry[] = definition
      ? definition.versions.map((v) => ({ id: messageId(type, v.version), eventType: type, version: v.version, topic, body: versionMessage(definition, v) }))
      : [{ id: messageId(type, undefined), eventType: type, version: undefined, topic, body: untypedMessage(type) }];
    for (const entry of entries) {
      for (const ext of extensions) Object.assign(entry.body, ext.message?.({ definition, eventType: type, version: entry.version, topic }, entry.body) ?? {});
    }
    messages.set(type, entries);
  }

  const channelIds = channelIdsFor([...new Set([...messages.values()].flat().map((m) => m.topic))]);
  const channels: Doc = {};
  for (const [topic, id] of channelIds) {
    const onTopic = [...messages.values()].flat().filter((m) => m.topic === topic);
    channels[id] = {
      address: topic,
      description: `Kafka topic ${topic}`,
      messages: Object.fromEntries(onTopic.map((m) => [m.id, { $ref: `#/components/messages/${m.id}` }])),
    };
  }

  const operations: Doc = {};
  const operation = (action: 'send' | 'receive', type: string, entries: MessageEntry[], summary: string) => {
    const channel = channelIds.get(entries[0]!.topic)!;
    operations[`${action}_${safeId(type)}`] = {
      action,
      channel: { $ref: `#/channels/${channel}` },
      summary,
      messages: entries.map((m) => ({ $ref: `#/channels/${channel}/messages/${m.id}` })),
    };
  };
  for (const type of produced) {
    const entries = messages.get(type)!;
    operation('send', type, entries.slice(-1), `The outbox relay publishes ${type} events (v${definitions.get(type)!.version}) enqueued by this service.`);
  }
  for (const type of handled) operation('receive', type, messages.get(type)!, `This service's consumer applies ${type} events, once each (inbox); older versions are upcast.`);

  return {
    asyncapi: '3.0.0',
    info: source.info ?? { title: 'Events', version: '1.0.0' },
    defaultContentType: 'application/json',
    channels,
    operations,
    components: { messages: Object.fromEntries([...messages.values()].flat().map((m) => [m.id, m.body])) },
  };
}

function versionMessage(definition: AnyEventDefinition, v: EventVersion): Doc {
  return {
    name: definition.type,
    title: `${definition.type} v${v.version}`,
    ...(definition.description ? { summary: definition.description } : {}),
    contentType: 'application/json',
    headers: headersSchema(definition.type, v.version),
    payload: messagePayloadSchema(definition.type, v),
    correlationId: { description: 'The event id, unique per event', location: '$message.payload#/event_id' },
    bindings: { kafka: { key: { type: 'string', description: 'The event key: events of one key stay in order' }, bindingVersion: '0.5.0' } },
  };
}

function untypedMessage(type: string): Doc {
  return {
    name: type,
    title: type,
    summary: 'No event definition: the handler checks the payload itself.',
    contentType: 'application/json',
    headers: headersSchema(type, undefined),
    payload: { type: 'object', properties: envelopeProperties(type), required: ['event_id'] },
  };
}

function headersSchema(type: string, version: number | undefined): Doc {
  const properties: Doc = {
    [HEADERS.eventId]: { type: 'string', description: 'The event id (also payload.event_id)' },
    [HEADERS.eventType]: { type: 'string', const: type },
    [HEADERS.createdAt]: { type: 'string', format: 'date-time', description: 'When the outbox row was written' },
    [HEADERS.outboxId]: { type: 'string', description: 'The outbox row id' },
  };
  // A first version also travels without the header: every producer wrote that before v2 existed.
  if (version !== undefined) properties[EVENT_VERSION_HEADER] = { type: 'string', const: String(version), description: version === 1 ? 'The schema version; absent means 1' : 'The schema version' };
  return { type: 'object', properties, required: [HEADERS.eventId, HEADERS.eventType] };
}

function messageId(type: string, version: number | undefined): string {
  return version === undefined ? safeId(type) : `${safeId(type)}.v${version}`;
}

function safeId(text: string): string {
  return text.replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** Channel ids from topic names (ids allow fewer characters than topics), unique. */
function channelIdsFor(topics: string[]): Map<string, string> {
  const ids = new Map<string, string>();
  const taken = new Set<string>();
  for (const topic of topics.sort()) {
    let id = topic.replace(/[^A-Za-z0-9_-]/g, '_');
    for (let n = 2; taken.has(id); n++) id = `${topic.replace(/[^A-Za-z0-9_-]/g, '_')}_${n}`;
    taken.add(id);
    ids.set(topic, id);
  }
  return ids;
}

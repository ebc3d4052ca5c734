import type { CloudEventsMode, CloudEventsSettings, KafkaSettings } from '../../config/settings';

// The kafka.cloudEvents option completed and checked: which topics the relay writes as
// CloudEvents, and the attributes it cannot take from the row.

export type ResolvedCloudEvents = Required<CloudEventsSettings>;

const MODES: readonly CloudEventsMode[] = ['binary', 'structured'];

/** The option with its defaults: the source names this outbox unless a service gives its own. */
export function resolveCloudEvents(given: CloudEventsSettings, schema: string): ResolvedCloudEvents {
  return {
    topics: { ...given.topics },
    source: given.source ?? `urn:temporal-outbox:${schema}`,
    subject: given.subject ?? 'none',
    dataSchemas: { ...given.dataSchemas },
  };
}

/** What is wrong with the option, in the words of resolveConfig's other problems. */
export function cloudEventsProblems(kafka: KafkaSettings): string[] {
  const problems: string[] = [];
  const ce = kafka.cloudEvents;
  // A topic the relay never writes to is a typo: the topic meant would silently stay plain.
  const published = new Set([kafka.topic, ...Object.values(kafka.routes)]);
  for (const [topic, mode] of Object.entries(ce.topics)) {
    if (!MODES.includes(mode)) problems.push(`kafka.cloudEvents.topics (CLOUDEVENTS_TOPICS): mode of ${topic} must be binary or structured, got ${JSON.stringify(mode)}`);
    if (!published.has(topic)) problems.push(`kafka.cloudEvents.topics (CLOUDEVENTS_TOPICS): the relay publishes nothing to ${topic} (it is neither KAFKA_TOPIC nor a KAFKA_TOPIC_ROUTES topic)`);
  }
  if (ce.source !== undefined && ce.source.trim() === '') problems.push('kafka.cloudEvents.source (CLOUDEVENTS_SOURCE) must not be empty');
  if (ce.subject !== undefined && ce.subject !== 'key' && ce.subject !== 'none') problems.push(`kafka.cloudEvents.subject (CLOUDEVENTS_SUBJECT) must be key or none, got ${JSON.stringify(ce.subject)}`);
  for (const [type, uri] of Object.entries(ce.dataSchemas ?? {})) {
    if (uri.trim() === '') problems.push(`kafka.cloudEvents.dataSchemas (CLOUDEVENTS_DATASCHEMAS): the schema URI of ${type} must not be empty`);
  }
  return problems;
}

/** The mode `topic` is written in; undefined: the plain format. */
export function cloudEventsModeOf(settings: ResolvedCloudEvents, topic: string): CloudEventsMode | undefined {
  return settings.topics[topic];
}

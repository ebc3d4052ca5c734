/** How a topic's values are written when the Schema Registry encodes them. */
export type RegistryFormat = 'avro' | 'json-schema';

/**
 * Which subject a type's schema is registered under (Confluent's subject name strategies):
 * - `topic`: `<topic>-value`, one schema per topic (Confluent's default; a topic of one type);
 * - `record`: the record's full name (Avro `namespace.name`, JSON Schema `title`, else the event type);
 * - `topic-record`: `<topic>-<record name>`, for a topic that carries several event types.
 */
export type SubjectNaming = 'topic' | 'record' | 'topic-record';

export interface SchemaRegistrySettings {
  /** Base URL of a Confluent-compatible API (Confluent, Karapace, Apicurio's /apis/ccompat/v7). */
  url: string;
  /** Topic → format of its values; a topic not listed stays plain JSON. Consumers decode any framed value. */
  topics: Record<string, RegistryFormat>;
  subjectNaming: SubjectNaming;
  /** Each registry request is abandoned after this (a registry that never answers must not hang the relay). */
  requestTimeoutMs: number;
  /** HTTP basic credentials, when the registry asks for them. */
  username?: string;
  password?: string;
}

/** What a service gives (kafka.schemaRegistry): the URL, the rest defaulted. */
export type SchemaRegistryOptions = Pick<SchemaRegistrySettings, 'url'> & Partial<Omit<SchemaRegistrySettings, 'url'>>;

export const SCHEMA_REGISTRY_DEFAULTS = { topics: {}, subjectNaming: 'topic', requestTimeoutMs: 5_000 } as const satisfies Partial<SchemaRegistrySettings>;

export const REGISTRY_FORMATS: readonly RegistryFormat[] = ['avro', 'json-schema'];
export const SUBJECT_NAMINGS: readonly SubjectNaming[] = ['topic', 'record', 'topic-record'];

/** The settings completed with their defaults, or undefined when no registry is configured. */
export function resolveSchemaRegistry(given: SchemaRegistryOptions | undefined): SchemaRegistrySettings | undefined {
  if (given === undefined) return undefined;
  return { ...SCHEMA_REGISTRY_DEFAULTS, ...given, url: given.url, topics: { ...given.topics } };
}

/** What is wrong with these settings, each as a sentence naming the option and its variable. */
export function schemaRegistryProblems(s: SchemaRegistryOptions | undefined): string[] {
  if (s === undefined) return [];
  const problems: string[] = [];
  if (!/^https?:\/\/[^\s/]+/.test(s.url)) problems.push(`kafka.schemaRegistry.url (SCHEMA_REGISTRY_URL): "${s.url}" must be an http:// or https:// URL`);
  for (const [topic, format] of Object.entries(s.topics ?? {})) {
    if (!REGISTRY_FORMATS.includes(format)) problems.push(`kafka.schemaRegistry.topics (SCHEMA_REGISTRY_TOPICS): topic ${topic} has format "${format}"; use ${REGISTRY_FORMATS.join(' or ')}`);
  }
  if (s.subjectNaming !== undefined && !SUBJECT_NAMINGS.includes(s.subjectNaming)) {
    problems.push(`kafka.schemaRegistry.subjectNaming (SCHEMA_REGISTRY_SUBJECT_NAMING): "${s.subjectNaming}"; use ${SUBJECT_NAMINGS.join(', ')}`);
  }
  if (s.requestTimeoutMs !== undefined && !(Number.isInteger(s.requestTimeoutMs) && s.requestTimeoutMs > 0)) {
    problems.push('kafka.schemaRegistry.requestTimeoutMs (SCHEMA_REGISTRY_TIMEOUT_MS) must be a positive integer');
  }
  return problems;
}

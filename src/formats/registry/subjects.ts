import type { SubjectNaming } from './settings';

/**
 * The subject a value schema is registered under, as Confluent's serializers name it:
 * TopicNameStrategy (`<topic>-value`), RecordNameStrategy (`<record name>`) and
 * TopicRecordNameStrategy (`<topic>-<record name>`).
 */
export function subjectFor(naming: SubjectNaming, topic: string, recordName: string): string {
  switch (naming) {
    case 'topic':
      return `${topic}-value`;
    case 'record':
      return recordName;
    case 'topic-record':
      return `${topic}-${recordName}`;
  }
}

/** A schema's record name: Avro's full name (namespace.name), a JSON Schema's title, else the event type. */
export function recordNameOf(schema: unknown, eventType: string): string {
  if (schema === null || typeof schema !== 'object') return eventType;
  const s = schema as { name?: unknown; namespace?: unknown; title?: unknown };
  if (typeof s.name === 'string') {
    if (s.name.includes('.') || typeof s.namespace !== 'string' || s.namespace === '') return s.name;
    return `${s.namespace}.${s.name}`;
  }
  return typeof s.title === 'string' && s.title !== '' ? s.title : eventType;
}

import { REGISTRY_FORMATS, type RegistryFormat } from './settings';

// SCHEMA_REGISTRY_TOPICS, read by the environment adapter (src/config/env.ts): `topic=format`
// pairs, comma-separated, e.g. `orders.events=avro,audit.events=json-schema`.

const TOPIC_NAME = /^[A-Za-z0-9._-]{1,200}$/;

/** `a=avro,b=json-schema` → { a: 'avro', b: 'json-schema' }; call only on text registryTopicProblems accepted. */
export function parseRegistryTopics(text: string): Record<string, RegistryFormat> {
  const topics: Record<string, RegistryFormat> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    topics[pair.slice(0, at).trim()] = pair.slice(at + 1).trim() as RegistryFormat;
  }
  return topics;
}

export function registryTopicProblems(text: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    const topic = at < 0 ? '' : pair.slice(0, at).trim();
    const format = at < 0 ? '' : pair.slice(at + 1).trim();
    if (topic === '' || format === '') problems.push(`"${pair}" must look like topic=${REGISTRY_FORMATS.join('|')}`);
    else if (!TOPIC_NAME.test(topic)) problems.push(`"${topic}" must be a valid Kafka topic name`);
    else if (!(REGISTRY_FORMATS as readonly string[]).includes(format)) problems.push(`topic ${topic}: format "${format}" is not one of ${REGISTRY_FORMATS.join(', ')}`);
    else if (seen.has(topic)) problems.push(`topic ${topic} is listed twice`);
    seen.add(topic);
  }
  return problems;
}

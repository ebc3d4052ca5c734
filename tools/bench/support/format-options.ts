import { SchemaRegistryClient } from '../../../src/formats/registry/client';
import { PaymentConfirmed } from '../../../examples/payments/event-types';
import { CREDIT_AVRO } from '../../../test/fixtures/events/credit-avro';

// The formats bench:formats-pipeline compares end to end: the settings each gives the relay and
// the consumer worker for the run's own topic, and what must be in place first (a registry topic's
// schema, registered under the topic's subject as a deployment step would: the bundled relay
// worker takes the subject's latest version).

export interface FormatOption {
  name: string;
  /** Settings of both workers for this topic. */
  env(topic: string, registryUrl: string): Record<string, string>;
  /** Settings of the relay worker only. */
  relayEnv?: Record<string, string>;
  /** Node flags of the relay worker on top of its own. */
  relayNodeArgs?: string[];
  /** Run once per topic before its workers start. */
  prepare?(topic: string, registryUrl: string): Promise<void>;
  needsRegistry?: boolean;
}

const register = (topic: string, url: string, schema: object, type: 'AVRO' | 'JSON') =>
  new SchemaRegistryClient({ url, requestTimeoutMs: 10_000 }).register(`${topic}-value`, JSON.stringify(schema), type).then(() => undefined);

const jsonSchema = () => PaymentConfirmed.versions[PaymentConfirmed.versions.length - 1]!.jsonSchema;

export const FORMAT_OPTIONS: FormatOption[] = [
  { name: 'plain JSON', env: () => ({}) },
  // The relay checks each row against the example's event types (the same module `asyncapi --module` reads; a .ts one is imported through tsx).
  { name: 'event catalog check', env: () => ({}), relayEnv: { OUTBOX_EVENTS_MODULE: 'examples/payments/asyncapi.ts' }, relayNodeArgs: ['--import', 'tsx'] },
  {
    name: 'registry JSON Schema',
    needsRegistry: true,
    env: (topic, url) => ({ SCHEMA_REGISTRY_URL: url, SCHEMA_REGISTRY_TOPICS: `${topic}=json-schema` }),
    prepare: (topic, url) => register(topic, url, jsonSchema(), 'JSON'),
  },
  {
    name: 'registry Avro',
    needsRegistry: true,
    env: (topic, url) => ({ SCHEMA_REGISTRY_URL: url, SCHEMA_REGISTRY_TOPICS: `${topic}=avro` }),
    prepare: (topic, url) => register(topic, url, CREDIT_AVRO, 'AVRO'),
  },
  { name: 'CloudEvents binary', env: (topic) => ({ CLOUDEVENTS_TOPICS: `${topic}=binary` }) },
  { name: 'CloudEvents structured', env: (topic) => ({ CLOUDEVENTS_TOPICS: `${topic}=structured` }) },
];

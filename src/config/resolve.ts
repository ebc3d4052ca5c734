import { DEFAULTS } from './defaults';
import { ConfigError } from './errors';
import { validateSchemaName } from '../db/schema';
import type { CloudEventsSettings, OutboxOptions, Settings } from './settings';
import { cloudEventsProblems, resolveCloudEvents } from '../formats/cloudevents/settings';

import { resolveSchemaRegistry, schemaRegistryProblems, type SchemaRegistrySettings } from '../formats/registry/settings';

/** The settings every part of the library reads: the options given, completed with DEFAULTS. */
export type Config = Settings & {
  kafka: { minInsyncReplicas: number; cloudEvents: Required<CloudEventsSettings>; schemaRegistry?: SchemaRegistrySettings };
  relay: { /** Workflow id of shard i. */ workflowId(shardIndex: number): string };
  audit: { taskQueue: string };
  /** Deprecated settings that were used, with the name replacing each; a worker logs them once at start. */
  notices: readonly string[];
};

/**
 * Builds the library's settings from a partial options object and the documented defaults
 * (src/config/defaults.ts). Reads no environment and no file; `loadConfig(env)` is the adapter
 * that turns variables into these options. Throws ConfigError naming every problem at once.
 */
export function resolveConfig(options: OutboxOptions = {}, notices: readonly string[] = []): Config {
  const s: Settings = {
    database: { ...DEFAULTS.database, ...options.database, workerUrls: { ...DEFAULTS.database.workerUrls, ...options.database?.workerUrls } },
    links: {
      database: { ...DEFAULTS.links.database, ...options.links?.database },
      kafka: { ...DEFAULTS.links.kafka, ...options.links?.kafka },
      health: { ...DEFAULTS.links.health, ...options.links?.health },
    },
    kafka: { ...DEFAULTS.kafka, ...options.kafka },
    temporal: { ...DEFAULTS.temporal, ...options.temporal },
    relay: { ...DEFAULTS.relay, ...options.relay },
    inbox: { ...DEFAULTS.inbox, ...options.inbox },
    consumer: { ...DEFAULTS.consumer, ...options.consumer },
    retention: { ...DEFAULTS.retention, ...options.retention },
    audit: { ...DEFAULTS.audit, ...options.audit },
    doctor: { ...DEFAULTS.doctor, ...options.doctor },
    metrics: { ...DEFAULTS.metrics, ...options.metrics },
    tracing: { ...DEFAULTS.tracing, ...options.tracing },
    logLevel: options.logLevel ?? DEFAULTS.logLevel,
    cacheDir: options.cacheDir ?? DEFAULTS.cacheDir,
  };
  const minInsyncReplicas = s.kafka.minInsyncReplicas ?? (s.kafka.replicationFactor >= 3 ? 2 : 1);
  const problems = settingProblems(s, minInsyncReplicas);
  if (problems.length > 0) throw new ConfigError(problems);
  const url = s.database.url;
  const schemaRegistry = resolveSchemaRegistry(s.kafka.schemaRegistry);
  const prefix = s.relay.workflowIdPrefix;
  return {
    ...s,
    database: { ...s.database, workerUrls: { relay: s.database.workerUrls.relay ?? url, consumer: s.database.workerUrls.consumer ?? url, retention: s.database.workerUrls.retention ?? url } },
    kafka: { ...withoutRegistry(s.kafka), minInsyncReplicas, cloudEvents: resolveCloudEvents(s.kafka.cloudEvents, s.database.schema), ...(schemaRegistry && { schemaRegistry }) },
    relay: { ...s.relay, workflowId: (shardIndex: number) => `${prefix}-${shardIndex}` },
    audit: { ...s.audit, taskQueue: s.audit.taskQueue ?? s.retention.taskQueue },
    notices,
  };
}

/** The kafka section without its schemaRegistry options, which resolve into settings of their own. */
function withoutRegistry(kafka: Settings['kafka']): Omit<Settings['kafka'], 'schemaRegistry'> {
  const rest = { ...kafka };
  delete rest.schemaRegistry;
  return rest;
}

const TOPIC_NAME = /^[A-Za-z0-9._-]{1,200}$/;

/** What no single setting shows: settings that contradict each other. */
function settingProblems(s: Settings, minInsyncReplicas: number): string[] {
  const problems: string[] = [];
  try {
    validateSchemaName(s.database.schema);
  } catch (err) {
    problems.push(`database.schema (OUTBOX_SCHEMA): ${(err as Error).message}`);
  }
  const minimumInboxHorizon = s.kafka.topicRetentionMs + s.kafka.maxConsumerLagMs;
  if (s.inbox.retentionMs <= minimumInboxHorizon) {
    // A processed id forgotten while Kafka can still redeliver its event would be applied twice.
    problems.push(
      `inbox.retentionMs (INBOX_RETENTION_MS): ${s.inbox.retentionMs} ms must exceed kafka.topicRetentionMs + kafka.maxConsumerLagMs ` +
        `(KAFKA_TOPIC_RETENTION_MS + CONSUMER_MAX_LAG_MS, ${minimumInboxHorizon} ms), or a redelivered event could be applied twice`,
    );
  }
  if (minInsyncReplicas > s.kafka.replicationFactor) {
    problems.push(`kafka.minInsyncReplicas (KAFKA_MIN_INSYNC_REPLICAS): ${minInsyncReplicas} exceeds the replication factor ${s.kafka.replicationFactor}: no write could ever succeed`);
  }
  problems.push(...schemaRegistryProblems(s.kafka.schemaRegistry));
  if (s.kafka.brokers.length === 0) problems.push('kafka.brokers (KAFKA_BROKERS): name at least one broker');
  for (const topic of [s.kafka.topic, s.kafka.deadLetterTopic, ...Object.values(s.kafka.routes)]) {
    if (!TOPIC_NAME.test(topic)) problems.push(`"${topic}" must be a valid Kafka topic name`);
  }
  problems.push(...cloudEventsProblems(s.kafka));
  // The registry frames the payload and CloudEvents describes it as JSON (binary mode's
  // content-type, structured mode's envelope): one topic with both would be read wrongly by one side.
  for (const topic of Object.keys(s.kafka.schemaRegistry?.topics ?? {})) {
    if (s.kafka.cloudEvents?.topics?.[topic] !== undefined) {
      problems.push(`topic ${topic} is listed for both the Schema Registry (SCHEMA_REGISTRY_TOPICS) and CloudEvents (CLOUDEVENTS_TOPICS): choose one per topic`);
    }
  }
  return problems;
}

/** The schema owner's database URL, or a ConfigError saying how to give one. */
export function databaseUrl(config: Config): string {
  if (config.database.url === undefined) throw new ConfigError(['database.url (DATABASE_URL) is not set: give it, or pass your own pool']);
  return config.database.url;
}

/** The database URL a worker of `component` connects with (its own, else database.url). */
export function workerDatabaseUrl(config: Config, component: keyof Settings['database']['workerUrls']): string {
  const url = config.database.workerUrls[component];
  if (url === undefined) throw new ConfigError([`database.url (DATABASE_URL) is not set: give it (or ${component.toUpperCase()}_DATABASE_URL), or pass your own pool`]);
  return url;
}

import type { TLSConfig } from '@temporalio/client';
import type { SchemaRegistryOptions } from '../formats/registry/settings';

// What the library can be told, one section per concern, each setting with its meaning and, in
// src/config/defaults.ts, its default. A service passes a partial of this to resolveConfig; the
// environment adapter (src/config/env.ts) builds the same partial from variables.

export interface DatabaseSettings {
  /** The schema owner's connection: migrations, setup, doctor, the CLI. Unset: pass your own pool. */
  url?: string;
  /**
   * Each worker's own connection, for a login holding only its component's role
   * (migrations/0041_component_roles.sql). Unset: the worker uses `url`.
   */
  workerUrls: { relay?: string; consumer?: string; retention?: string };
  /**
   * Every pool the library opens: a statement running longer, or waiting for a lock longer, is
   * cancelled with an error (the caller retries) instead of holding a connection forever.
   * Migrations set none, the retention worker its own (retention.statementTimeoutMs), the doctor 60 s.
   */
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /**
   * The schema holding every object of the library (default temporal_outbox): migrations create
   * it, and every pool of the library rewrites its SQL into it (src/db/schema.ts).
   */
  schema: string;
}

export interface KafkaSslSettings {
  /** PEM contents. */
  ca?: string;
  cert?: string;
  key?: string;
  /** false accepts any broker certificate: for a test broker only, never in production. */
  rejectUnauthorized: boolean;
}

export interface KafkaSaslSettings {
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
}

/** How a topic's messages carry the CloudEvents Kafka protocol binding (docs/formats.md#cloudevents). */
export type CloudEventsMode = 'binary' | 'structured';

/**
 * CloudEvents on chosen topics (docs/formats.md#cloudevents). Consumers read every form whatever
 * is set here; this only says what the relay writes.
 */
export interface CloudEventsSettings {
  /** Topic → mode; a topic not listed carries the plain format (the payload and our headers). */
  topics: Record<string, CloudEventsMode>;
  /**
   * `source` of every event (a row's own `ce_source` header wins). Unset: `urn:temporal-outbox:<schema>`;
   * give your service's URI, since source + id must name one event across everything a consumer reads.
   */
  source?: string;
  /** `subject`: `key` puts the event's key (the Kafka key) there; `none` (default) leaves it out (a row's `ce_subject` header still sets it). */
  subject?: 'key' | 'none';
  /** Event type → `dataschema` URI (a row's `ce_dataschema` header wins). */
  dataSchemas?: Record<string, string>;
}

export interface KafkaSettings {
  brokers: string[];
  /** TLS to the brokers; undefined: plaintext. */
  ssl?: KafkaSslSettings;
  sasl?: KafkaSaslSettings;
  topic: string;
  deadLetterTopic: string;
  /** Event type → topic, like Debezium's route-by-field; types not listed go to `topic`. */
  routes: Record<string, string>;
  partitions: number;
  /** Kafka's own retention of the events topic; the inbox horizon must outlive it. */
  topicRetentionMs: number;
  maxMessageBytes: number;
  /**
   * Encode produce requests with far less garbage (src/kafka/lean-encoder.ts). It replaces
   * members of kafkajs's internal Encoder class, which every kafkajs client of the process
   * shares: off unless asked; the bundled worker processes turn it on (they run nothing else).
   */
  leanEncoder: boolean;
  /** How often a running consumer re-reads the topic's real retention (src/kafka/topic-retention.ts). */
  retentionCheckMs: number;
  consumerGroup: string;
  maxConsumerLagMs: number;
  /** Confluent Schema Registry encoding, per topic (src/formats/registry, docs/formats.md); unset: plain JSON everywhere. */
  schemaRegistry?: SchemaRegistryOptions;
  /** Replicas of the library's topics, and the acks a write needs (default 2 when replicated 3 times or more, else 1). */
  replicationFactor: number;
  minInsyncReplicas?: number;
  /** CloudEvents per topic (src/formats/cloudevents/); the default writes none. */
  cloudEvents: CloudEventsSettings;
}

export interface TemporalSettings {
  address: string;
  namespace: string;
  /** TLS to Temporal (the SDK's own TLSConfig; true: the system's roots). On by itself with an API key. */
  tls?: TLSConfig | boolean;
  /** Sent as a bearer token on every call (Temporal Cloud API keys). */
  apiKey?: string;
  /** gRPC metadata sent on every call. */
  metadata?: Record<string, string>;
  /** The Web UI, for links in the doctor's and the CLI's messages. */
  uiUrl: string;
  /** How long a client waits to connect before giving up with an error. */
  connectTimeoutMs: number;
  /**
   * Deadline of the calls the CLI and the API make and wait on (start, query, update, result of a
   * short workflow): past it they fail with DEADLINE_EXCEEDED instead of hanging.
   */
  callTimeoutMs: number;
}

export interface RelaySettings {
  /** Shards a fresh outbox starts with (a recorded layout keeps its own count). */
  shards: number;
  batchSize: number;
  maxAttempts: number;
  /** Payload bytes one batch loads and sends at most; what bounds the relay worker's memory with large payloads. */
  batchMaxBytes: number;
  /** Task queue the relay workers poll; undefined: TASK_QUEUES.relay. */
  taskQueue?: string;
  /** Shard i's workflow id is `<prefix>-<i>`: two outboxes on one namespace need different prefixes. */
  workflowIdPrefix: string;
  /** How long an idle relay waits for a NOTIFY before its workflow loops anyway. */
  idleWaitMs: number;
  /** How long a drained session waits for more rows before the idle wait (undefined: the workflow's 10 s). */
  drainGraceMs?: number;
  /** Fallback poll inside the idle wait, for notifications missed while the listener reconnected. */
  fallbackPollMs: number;
  /** How often a poll reads its shard from the beginning instead of from its proven bound (docs/vacuum.md). */
  fullScanIntervalMs: number;
  /** When set, the relay worker logs its memory this often (soak runs). */
  memoryLogMs?: number;
}

export interface InboxSettings {
  /** Processed ids are forgotten after this; must exceed kafka.topicRetentionMs + kafka.maxConsumerLagMs. */
  retentionMs: number;
}

export interface ConsumerSettings {
  /** The inbox's identity, independent of the Kafka group: a replay by a new group still dedupes. */
  inboxName: string;
  /** Undefined: TASK_QUEUES.consumer. */
  taskQueue?: string;
  /** Events per chunk and per applyEventsWorkflow (docs/consumer.md). */
  batchSize: number;
  /** Message bytes per chunk: keeps one workflow input well below Temporal's payload limit. */
  batchMaxBytes: number;
  /** Apply workflows one consumer process runs at once. */
  maxInFlight: number;
  fetchAheadMinEvents: number;
  coalesceWindowMs: number;
  fetchMaxWaitMs: number;
  fetchMaxBytes: number;
  fetchMaxPartitionBytes: number;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  /** Copy rejected events to kafka.deadLetterTopic as well as parking them. */
  deadLetter: boolean;
  deadLetterRetryMs: number;
  deadLetterMaxAttempts: number;
  /** An event of a type no handler knows: counted and skipped, or parked. */
  unknownEventTypes: 'skip' | 'park';
}

export interface RetentionSettings {
  windowMs: number;
  /** Parked rows older than this are deleted by the retention schedule. */
  parkedRetentionMs: number;
  /** The retention worker's statement timeout (its scans are far larger than a hot-path statement's). */
  statementTimeoutMs: number;
  /** Schedule interval, like 30s, 10m, 1h or 1d. */
  interval: string;
  batchSize: number;
  batchPauseMs: number;
  timeBudgetMs: number;
  taskQueue: string;
  scheduleId: string;
}

export interface AuditSettings {
  windowMs: number;
  settleMs: number;
  interval: string;
  scheduleId: string;
  /** Undefined: retention.taskQueue. */
  taskQueue?: string;
  /** The consumers whose inboxes must hold every published event of the listed types. */
  consumers: { consumer: string; eventTypes: string[] }[];
  /** Whether each run reads the audited consumers' topics over its window for events only the topic has (needs Kafka). */
  readTopics: boolean;
  /** At most about this many messages read per topic and run (from the window's start; later runs read on). */
  maxTopicMessages: number;
}

export interface DoctorSettings {
  maxPendingAgeMs: number;
  maxConsumerWaitMs: number;
  maxHorizonAgeMs: number;
}

export interface MetricsSettings {
  /**
   * First of the ports the bundled workers serve Prometheus metrics on: relay +0, consumer +1,
   * retention +2, the Temporal SDK's own +10, +11, +12. Undefined: no endpoint (a service given
   * `registry` serves it itself).
   */
  portBase?: number;
  host: string;
  /** How often gauges read from PostgreSQL and Kafka are refreshed; scrapes never query. */
  sampleMs: number;
}

export interface TracingSettings {
  /** OTLP/HTTP traces endpoint; undefined: no exporter of ours (spans still reach a provider the service registered). */
  otlpTracesUrl?: string;
  otlpHeaders: Record<string, string>;
  serviceName?: string;
  sampleRatio: number;
}

/**
 * Client-side bounds on every link, and the workers' health check (docs/guarantees.md#dead-links,
 * #stepping-aside): a server that never receives a request cannot time it out.
 */
export interface LinkSettings {
  database: {
    connectTimeoutMs: number;
    /** A query unanswered this long fails and its connection is destroyed; never below the pool's statement timeout + 5 s. */
    queryTimeoutMs: number;
    /** TCP keepalive starts after this idle time (the kernel sets the probes' interval and count). */
    keepAliveIdleMs: number;
  };
  kafka: {
    connectionTimeoutMs: number;
    authenticationTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveIdleMs: number;
    /** Advertised broker host:port → the host:port to connect to instead (a tunnel, a private endpoint, a fault proxy). */
    brokerRoutes: Record<string, string>;
  };
  /**
   * Relay and consumer workers probe their links this often, each probe bounded, and step aside
   * once a link has failed `failures` probes in a row and has been failing for `failingForMs`.
   */
  health: { intervalMs: number; timeoutMs: number; failures: number; failingForMs: number };
}

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Settings {
  database: DatabaseSettings;
  links: LinkSettings;
  kafka: KafkaSettings;
  temporal: TemporalSettings;
  relay: RelaySettings;
  inbox: InboxSettings;
  consumer: ConsumerSettings;
  retention: RetentionSettings;
  audit: AuditSettings;
  doctor: DoctorSettings;
  metrics: MetricsSettings;
  tracing: TracingSettings;
  /** Level of the logger the library makes when none is given. */
  logLevel: LogLevel;
  /** Where workflow bundles built from source are cached (the installed package ships prebuilt ones). */
  cacheDir: string;
}

/** A partial of every section: what a service passes to resolveConfig. */
export type OutboxOptions = {
  [S in keyof Settings]?: Settings[S] extends string ? Settings[S] : S extends 'database' ? Partial<Omit<DatabaseSettings, 'workerUrls'>> & { workerUrls?: DatabaseSettings['workerUrls'] } : S extends 'links' ? { [K in keyof LinkSettings]?: Partial<LinkSettings[K]> } : Partial<Settings[S]>;
};

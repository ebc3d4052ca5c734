import { z } from 'zod';
import { resolveConfig, type Config } from './resolve';
import { ConfigError } from './errors';
import { kafkaSecurityFromEnv, withDatabaseSsl } from './security';
import { temporalFromEnv } from './temporal-env';
import type { CloudEventsMode, OutboxOptions } from './settings';
import { parseRegistryTopics, registryTopicProblems } from '../formats/registry/env';
import type { SchemaRegistryOptions } from '../formats/registry/settings';

// The environment adapter: variables → options → resolveConfig. Built on demand (never at import
// time) so tests and tools can build their own; every invalid variable is reported at once. It
// reads the files variables name (TLS material, secrets) and nothing else: no file is written.

export { ConfigError } from './errors';
export { resolveConfig, databaseUrl, workerDatabaseUrl, type Config } from './resolve';
export { DEFAULT_LOCK_TIMEOUT_MS, DEFAULT_STATEMENT_TIMEOUT_MS, PROJECT_ROOT } from './defaults';

const positiveInt = z.coerce.number().int().positive();
const durationMs = z.coerce.number().int().positive();

/** The bundled workers serve metrics from here on unless METRICS_PORT_BASE says otherwise. */
const DEFAULT_METRICS_PORT_BASE = 19400;

/**
 * Every environment variable the library reads: its name, validation and meaning, once. Defaults
 * live in src/config/defaults.ts (an unset variable leaves its option unset), except where noted.
 */
const settings = z.object({
  DATABASE_URL: z.string().url().optional(),
  /**
   * Each worker's own connection, for a login user holding only its component's role
   * (migrations/0041_component_roles.sql). Unset: the worker uses DATABASE_URL.
   */
  RELAY_DATABASE_URL: z.string().url().optional(),
  CONSUMER_DATABASE_URL: z.string().url().optional(),
  RETENTION_DATABASE_URL: z.string().url().optional(),
  /**
   * Every worker and tool pool: a statement running longer, or waiting for a lock longer, is
   * cancelled with an error (the caller retries) instead of holding a connection forever.
   * Migrations set their own (none: a migration of a large table may legitimately run long),
   * the retention worker its own (RETENTION_STATEMENT_TIMEOUT_MS), the doctor 60 s.
   */
  DATABASE_STATEMENT_TIMEOUT_MS: durationMs.optional(),
  DATABASE_LOCK_TIMEOUT_MS: durationMs.optional(),
  /** The schema holding every object of the library (default temporal_outbox; checked by resolveConfig). */
  OUTBOX_SCHEMA: z.string().optional(),
  /**
   * Dead links (docs/guarantees.md#dead-links): client-side bounds, because a server that never
   * receives a query cannot time it out (src/config/settings.ts LinkSettings says what each does).
   * KAFKA_BROKER_ROUTES: `advertised=reachable` pairs (comma-separated host:port) for brokers
   * reached through a tunnel or proxy.
   */
  DATABASE_CONNECT_TIMEOUT_MS: durationMs.optional(),
  DATABASE_QUERY_TIMEOUT_MS: durationMs.optional(),
  DATABASE_KEEPALIVE_IDLE_MS: durationMs.optional(),
  KAFKA_CONNECTION_TIMEOUT_MS: durationMs.optional(),
  KAFKA_AUTHENTICATION_TIMEOUT_MS: durationMs.optional(),
  KAFKA_REQUEST_TIMEOUT_MS: durationMs.optional(),
  KAFKA_KEEPALIVE_IDLE_MS: durationMs.optional(),
  KAFKA_BROKER_ROUTES: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      for (const problem of brokerRouteProblems(text ?? '')) ctx.addIssue({ code: 'custom', message: problem });
    }),
  HEALTH_CHECK_INTERVAL_MS: durationMs.optional(),
  HEALTH_CHECK_TIMEOUT_MS: durationMs.optional(),
  HEALTH_CHECK_FAILURES: positiveInt.optional(),
  HEALTH_CHECK_FAILING_FOR_MS: durationMs.optional(),
  /**
   * TLS to PostgreSQL for every connection the project opens (libpq's meanings, docs/managed-services.md):
   * added to each database URL that does not carry its own `sslmode`.
   */
  DATABASE_SSLMODE: z.enum(['disable', 'prefer', 'require', 'verify-ca', 'verify-full']).optional(),
  /** CA certificate (PEM file) the server's certificate must chain to; libpq's sslrootcert. */
  DATABASE_SSLROOTCERT: z.string().min(1).optional(),

  KAFKA_BROKERS: z.string().min(1).optional(),
  /**
   * Temporal's connection follows @temporalio/envconfig: TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE,
   * TEMPORAL_API_KEY, TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH / _KEY_PATH,
   * TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME (and their _DATA forms),
   * TEMPORAL_GRPC_META_*, and a profile of TEMPORAL_CONFIG_FILE chosen by TEMPORAL_PROFILE
   * (src/config/temporal-env.ts). These are ours: the Web UI for links, and the timeouts.
   */
  TEMPORAL_UI_URL: z.string().url().optional(),
  /** How long a client waits to connect to Temporal before giving up with an error. */
  TEMPORAL_CONNECT_TIMEOUT_MS: durationMs.optional(),
  /**
   * Deadline of the calls the CLI and the app make and wait on (start, query, update, result of
   * a short workflow such as a redrive): past it they fail with DEADLINE_EXCEEDED instead of
   * hanging on a server that does not answer or a task queue no worker polls.
   */
  TEMPORAL_CALL_TIMEOUT_MS: durationMs.optional(),
  OUTBOX_CACHE_DIR: z.string().min(1).optional(),
  /** TLS to the brokers (on by itself with a CA, a client certificate or SASL over TLS). */
  KAFKA_SSL: z.enum(['true', 'false']).optional(),
  /** CA the brokers' certificates must chain to (PEM file); unset: the system's roots. */
  KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
  /** Client certificate and key (PEM files) for brokers that authenticate clients by TLS (mTLS). */
  KAFKA_SSL_CERT_FILE: z.string().min(1).optional(),
  KAFKA_SSL_KEY_FILE: z.string().min(1).optional(),
  /** `false` accepts any broker certificate: for a test broker only, never in production. */
  KAFKA_SSL_REJECT_UNAUTHORIZED: z.enum(['true', 'false']).optional(),
  /** SASL authentication to the brokers, with its user name and password (or the file holding it). */
  KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD_FILE: z.string().min(1).optional(),

  KAFKA_TOPIC: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be a valid Kafka topic name').optional(),
  KAFKA_DEAD_LETTER_TOPIC: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be a valid Kafka topic name').optional(),
  /**
   * Routing by event type, like Debezium's route-by-field: `type=topic` pairs, comma-separated
   * (e.g. `order_shipped=orders.events,invoice_paid=billing.events`). A type not listed
   * goes to KAFKA_TOPIC. `setup` creates every topic named here; consumers subscribe to the
   * topics of the types their handlers apply.
   */
  KAFKA_TOPIC_ROUTES: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      for (const problem of topicRouteProblems(text ?? '')) ctx.addIssue({ code: 'custom', message: problem });
    }),
  /**
   * CloudEvents per topic (docs/formats.md#cloudevents): `topic=binary|structured` pairs,
   * comma-separated (e.g. `orders.events=binary,audit.events=structured`). Topics not listed stay
   * plain. CLOUDEVENTS_SOURCE is every event's `source` (default `urn:temporal-outbox:<schema>`),
   * CLOUDEVENTS_SUBJECT=key puts the event key in `subject`, CLOUDEVENTS_DATASCHEMAS gives
   * `type=uri` pairs for `dataschema`.
   */
  CLOUDEVENTS_TOPICS: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      for (const problem of pairProblems(text ?? '', 'topic=binary|structured')) ctx.addIssue({ code: 'custom', message: problem });
    }),
  CLOUDEVENTS_SOURCE: z.string().min(1).optional(),
  CLOUDEVENTS_SUBJECT: z.enum(['key', 'none']).optional(),
  CLOUDEVENTS_DATASCHEMAS: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      for (const problem of pairProblems(text ?? '', 'event_type=uri')) ctx.addIssue({ code: 'custom', message: problem });
    }),
  /**
   * Confluent Schema Registry (docs/formats.md#schema-registry): its URL; the topics whose values
   * the relay encodes, as `topic=avro|json-schema` pairs; how subjects are named
   * (topic | record | topic-record); each request's bound; basic credentials.
   */
  SCHEMA_REGISTRY_URL: z.string().url().optional(),
  SCHEMA_REGISTRY_TOPICS: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      for (const problem of registryTopicProblems(text ?? '')) ctx.addIssue({ code: 'custom', message: problem });
    }),
  SCHEMA_REGISTRY_SUBJECT_NAMING: z.enum(['topic', 'record', 'topic-record']).optional(),
  SCHEMA_REGISTRY_TIMEOUT_MS: durationMs.optional(),
  SCHEMA_REGISTRY_USERNAME: z.string().min(1).optional(),
  SCHEMA_REGISTRY_PASSWORD: z.string().min(1).optional(),
  KAFKA_PARTITIONS: positiveInt.max(1000).optional(),
  /** Kafka's own retention of the events topic; the inbox horizon must outlive it. */
  KAFKA_TOPIC_RETENTION_MS: durationMs.optional(),
  KAFKA_MAX_MESSAGE_BYTES: positiveInt.optional(),
  /**
   * kafkajs encodes produce requests with far less garbage (src/kafka/lean-encoder.ts). It patches
   * kafkajs for the whole process: off unless `true`; the bundled worker processes default it on.
   */
  KAFKAJS_LEAN_ENCODER: z.enum(['true', 'false']).optional(),
  /** Replicas of the library's topics (default 1) and the acks a write needs (default 2 when replicated 3 times, else 1). */
  KAFKA_REPLICATION_FACTOR: positiveInt.max(10).optional(),
  KAFKA_MIN_INSYNC_REPLICAS: positiveInt.max(10).optional(),
  /** How often a running consumer re-reads the topic's real retention (src/kafka/topic-retention.ts). */
  KAFKA_RETENTION_CHECK_MS: z.coerce.number().int().min(1000).optional(),
  CONSUMER_GROUP: z.string().min(1).optional(),
  CONSUMER_MAX_LAG_MS: durationMs.optional(),
  INBOX_RETENTION_MS: durationMs.optional(),
  /** The inbox's identity, independent of the Kafka group: a replay by a new group still dedupes. */
  INBOX_CONSUMER: z.string().min(1).max(200).optional(),
  CONSUMER_TASK_QUEUE: z.string().min(1).optional(),
  /**
   * Events per chunk and per applyEventsWorkflow (docs/consumer.md, "Many events per activity";
   * 4,000 rather than 2,000: docs/measurements/consumer-log.md, "From 0.54× to 0.70×").
   */
  CONSUMER_BATCH_SIZE: positiveInt.max(10_000).optional(),
  /**
   * Message bytes per chunk and per applyEventsWorkflow (values plus a fixed allowance per event,
   * src/inbox/chunk-bounds.ts): keeps one workflow input well below Temporal's 2 MB payload limit
   * however large the events, which a count alone does not.
   */
  CONSUMER_BATCH_MAX_BYTES: positiveInt.min(16 * 1024).max(1_500_000).optional(),
  /**
   * Credit workflows one consumer process runs at once; more only start when a full batch waits
   * (so never at low load). 4, not 3, since fetching ahead fills them:
   * docs/measurements/consumer-log.md, "Fetching ahead again".
   */
  CONSUMER_MAX_IN_FLIGHT: positiveInt.max(64).optional(),
  /**
   * A partition's fetch of at least this many events lets kafkajs fetch again while it is applied
   * (docs/consumer.md, "Fetching ahead"); a smaller one is applied before the next fetch, as
   * fetching ahead a few events at a time costs a fetch per few events at low load. 0: always;
   * above the fetch size: never.
   */
  CONSUMER_FETCH_AHEAD_MIN_EVENTS: z.coerce.number().int().min(0).max(1_000_000).optional(),
  /**
   * How long an idle consumer's next credit workflow waits for the other partitions' chunks of the
   * same Kafka fetch before it leaves (src/inbox/event-coalescer.ts); 0 leaves with the first chunk.
   * 2 ms because without it a fetch cost two workflow round trips in a row (the first chunk alone,
   * then the rest): `npm run bench:pipeline`; docs/measurements/consumer-log.md has the
   * side-by-side figures.
   */
  CONSUMER_COALESCE_WINDOW_MS: z.coerce.number().int().min(0).max(1000).optional(),
  /** How long Kafka holds a consumer's fetch when no new message is there yet (kafkajs maxWaitTimeInMs; its default). */
  CONSUMER_FETCH_MAX_WAIT_MS: z.coerce.number().int().min(0).max(30_000).optional(),
  /**
   * Bytes one Kafka fetch returns at most, in all and per partition (kafkajs maxBytes,
   * maxBytesPerPartition). kafkajs decodes a whole fetch into message objects at once and keeps
   * them until every batch of it is handled, so these bound the consumer's memory; a message
   * larger than a partition's share is still fetched whole. 1.5 MiB in all: the 30-minute soak at
   * 2 MiB peaked at 250.4 MB, over the 250 MB target (2026-12-05 10:25). Quick runs of the consumer
   * alone (`BENCH_SECONDS=5 npx tsx tools/bench/consumer.bench.ts`, four of each alternated, 2026-12-05
   * 12:49–12:56): peak RSS 237–247 MiB against 246–249 at 2 MiB, 22,766–25,004 credits/s against
   * 24,983–26,242 (−8 % at the medians); CONSUMER_MAX_IN_FLIGHT=3 instead held 243–254 MiB. At a
   * trickle a fetch is far below either bound, so latency does not change. Earlier: 2 MiB against
   * 4 MiB, 248–255 MiB against 259–271 for the same credits per second; 1 MiB held 237–244 MiB but
   * cost a tenth of the throughput (docs/measurements/consumer-log.md).
   */
  CONSUMER_FETCH_MAX_BYTES: positiveInt.min(64 * 1024).max(64 * 1024 * 1024).optional(),
  CONSUMER_FETCH_MAX_PARTITION_BYTES: positiveInt.min(16 * 1024).max(16 * 1024 * 1024).optional(),
  CONSUMER_SESSION_TIMEOUT_MS: z.coerce.number().int().min(10_000).optional(),
  CONSUMER_REBALANCE_TIMEOUT_MS: z.coerce.number().int().min(10_000).optional(),
  CONSUMER_DEAD_LETTER: z.enum(['true', 'false']).optional(),
  /**
   * A dead-letter copy Kafka did not take (topic missing, broker refusal) is retried by a sweep
   * in each consumer this often, with the wait doubling per attempt (capped at 64×), and given up
   * ('failed', reason kept) after CONSUMER_DEAD_LETTER_MAX_ATTEMPTS. The parked row is written
   * first either way: the partition never waits for the dead-letter topic.
   */
  CONSUMER_DEAD_LETTER_RETRY_MS: durationMs.optional(),
  CONSUMER_DEAD_LETTER_MAX_ATTEMPTS: positiveInt.max(1000).optional(),
  /** An event of a type no handler of this consumer knows: counted and skipped, or parked. Never dead-lettered. */
  CONSUMER_UNKNOWN_EVENT_TYPES: z.enum(['skip', 'park']).optional(),

  RELAY_SHARDS: positiveInt.max(256).optional(),
  RELAY_BATCH_SIZE: positiveInt.max(10_000).optional(),
  RELAY_MAX_ATTEMPTS: positiveInt.max(100).optional(),
  /**
   * Payload bytes one relay batch loads and sends at most (rows past it wait for the next
   * batch; a single row larger than this still goes alone). What bounds the relay worker's
   * memory with large payloads: docs/relay.md has the measured heap use.
   */
  RELAY_BATCH_MAX_BYTES: positiveInt.min(64 * 1024).optional(),
  /** Task queue the relay worker polls; only tests override it (their own queue per test). */
  RELAY_TASK_QUEUE: z.string().min(1).optional(),
  /**
   * Shard i's workflow id is `<prefix>-<i>`. Two deployments (or a test beside the demo) on one
   * Temporal namespace need different prefixes, or they would share relay workflows.
   */
  RELAY_WORKFLOW_ID_PREFIX: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'letters, digits, dot, dash, underscore').optional(),
  /** How long an idle relay waits for a NOTIFY before its workflow loops anyway. */
  RELAY_IDLE_WAIT_MS: durationMs.max(10 * 60_000).optional(),
  /**
   * How long a drained relay session waits for more rows before its shard goes to the idle wait
   * (the workflow's default, 10 s, when unset). Like the batch size and the idle wait, it is given
   * to shards when they start: `relay restart` applies a change to running ones.
   */
  RELAY_DRAIN_GRACE_MS: durationMs.max(10 * 60_000).optional(),
  /** Fallback poll inside that wait, for notifications missed while the listener reconnected. */
  RELAY_FALLBACK_POLL_MS: durationMs.optional(),
  /**
   * How often a relay's poll reads its shard from the beginning instead of from its proven bound:
   * the safety net for rows made pending again by hand (docs/vacuum.md). Costly only while vacuum
   * is held back.
   */
  RELAY_FULL_SCAN_INTERVAL_MS: durationMs.max(3_600_000).optional(),
  /** When set, the relay worker logs its memory (RSS, V8 heap, external) this often; for soak runs. */
  RELAY_MEMORY_LOG_MS: durationMs.optional(),

  RETENTION_WINDOW_MS: durationMs.optional(),
  RETENTION_INTERVAL: z.string().regex(/^\d+[smhd]$/, 'must look like 30s, 10m, 1h or 1d').optional(),
  RETENTION_BATCH_SIZE: positiveInt.max(1_000_000).optional(),
  /**
   * Parked rows (inbox_parked_events, and outbox rows parked unpublished) older than this are
   * deleted by the retention schedule: long enough to look into, fix and redrive them.
   */
  PARKED_RETENTION_MS: durationMs.optional(),
  /**
   * The retention worker's statement timeout, instead of DATABASE_STATEMENT_TIMEOUT_MS: its delete
   * batches, table-size reads and the audit's window queries scan much more than a hot-path
   * statement. Its lock timeout stays DATABASE_LOCK_TIMEOUT_MS (a blocked delete is retried).
   */
  RETENTION_STATEMENT_TIMEOUT_MS: durationMs.optional(),
  RETENTION_TIME_BUDGET_MS: durationMs.optional(),
  /**
   * Rest between retention delete batches, leaving the small machine's CPU to the relay's poll;
   * 0 deletes flat out. docs/retention.md has the measured trade-off behind the default.
   */
  RETENTION_BATCH_PAUSE_MS: z.coerce.number().int().min(0).max(60_000).optional(),
  /** Overrides for tests and side-by-side deployments; the defaults come from src/config/constants.ts. */
  RETENTION_TASK_QUEUE: z.string().min(1).optional(),
  RETENTION_SCHEDULE_ID: z.string().min(1).optional(),
  /** Reconciliation audit: how much of the event history each run checks (by created_at). */
  AUDIT_WINDOW_MS: durationMs.optional(),
  /** Events younger than this are not expected to be applied yet; the window ends this long ago. */
  AUDIT_SETTLE_MS: z.coerce.number().int().min(0).optional(),
  AUDIT_INTERVAL: z.string().regex(/^\d+[smhd]$/, 'must look like 30s, 10m, 1h or 1d').optional(),
  AUDIT_SCHEDULE_ID: z.string().min(1).optional(),
  /** The audit runs on the retention worker's queue unless told otherwise. */
  AUDIT_TASK_QUEUE: z.string().min(1).optional(),
  /**
   * The consumers whose inboxes must hold every published event, as consumer=type|type,...
   * No default: the audit (its schedule, `audit run`) refuses to run without them, as only the
   * service knows which inbox applies which event types.
   */
  AUDIT_CONSUMERS: z
    .string()
    .regex(/^[^=,|\s]+=[^=,|\s]+(\|[^=,|\s]+)*(,[^=,|\s]+=[^=,|\s]+(\|[^=,|\s]+)*)*$/, 'must look like billing=invoice_paid,other=type_a|type_b')
    .optional(),
  /** false: the audit does not read the topics (events only a topic has go unreported; the worker then needs no Kafka). */
  AUDIT_READ_TOPICS: z.enum(['true', 'false']).optional(),
  /** At most about this many messages read per topic and audit run. */
  AUDIT_MAX_TOPIC_MESSAGES: positiveInt.max(100_000_000).optional(),
  /** The doctor fails when the oldest pending outbox row is older than this. */
  DOCTOR_MAX_PENDING_AGE_MS: durationMs.optional(),
  /** The doctor names every session or prepared transaction holding the vacuum horizon longer than this. */
  DOCTOR_MAX_HORIZON_AGE_MS: durationMs.optional(),

  /**
   * First of the ports the workers serve Prometheus metrics on (docs/observability.md): relay +0,
   * consumer +1, retention +2; the Temporal SDK's own metrics of each worker +10, +11, +12.
   * 0 turns every metrics endpoint off; unset: 19400 (the bundled workers serve metrics by default).
   */
  METRICS_PORT_BASE: z.coerce.number().int().min(0).max(65_000).optional(),
  /** Interface the metrics endpoints listen on; 0.0.0.0 in containers. */
  METRICS_HOST: z.string().min(1).optional(),
  /** How often gauges read from PostgreSQL and Kafka (backlog, parked rows, consumer-group lag) are refreshed; scrapes never query. */
  METRICS_SAMPLE_MS: z.coerce.number().int().min(1000).optional(),
  /** The doctor fails when events have waited on the topic this long (no consumer, or consumers falling behind). */
  DOCTOR_MAX_CONSUMER_WAIT_MS: durationMs.optional(),

  /**
   * OpenTelemetry traces (docs/observability.md, Traces), under the standard OTEL_* names. Off
   * unless an endpoint is set: then each worker exports its spans over OTLP/HTTP (protobuf-free
   * JSON) to `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`, or to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
   * as given. Headers (e.g. an API key) as `name=value,name2=value2`; never logged.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z
    .string()
    .optional()
    .superRefine((text, ctx) => {
      for (const pair of (text ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
        if (!/^[^=\s]+=.+$/.test(pair)) ctx.addIssue({ code: 'custom', message: `a header must look like name=value (got one of ${pair.length} characters)` });
      }
    }),
  /** Service name on the spans; default `temporal-outbox-<worker>` (relay, consumer, retention). */
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** Share of new traces sampled (0..1); a span whose parent came with a trace follows the parent's decision. */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).optional(),

  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
});


export type RawEnv = z.infer<typeof settings>;

/** The options the variables set; unset variables leave their option to the defaults. */
function optionsFromEnv(e: RawEnv, env: Record<string, string>, problems: string[], notices: string[]): OutboxOptions {
  const withSsl = (url: string | undefined) => (url === undefined ? undefined : withDatabaseSsl(url, e.DATABASE_SSLMODE, e.DATABASE_SSLROOTCERT));
  const flag = (v: 'true' | 'false' | undefined) => (v === undefined ? undefined : v === 'true');
  const { ssl, sasl } = kafkaSecurityFromEnv(e, problems);
  const metricsPortBase = e.METRICS_PORT_BASE ?? DEFAULT_METRICS_PORT_BASE;
  const otlpTracesUrl = e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`);
  return defined({
    database: defined({
      url: withSsl(e.DATABASE_URL),
      workerUrls: defined({ relay: withSsl(e.RELAY_DATABASE_URL), consumer: withSsl(e.CONSUMER_DATABASE_URL), retention: withSsl(e.RETENTION_DATABASE_URL) }),
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: e.DATABASE_LOCK_TIMEOUT_MS,
      schema: e.OUTBOX_SCHEMA,
    }),
    links: defined({
      database: defined({ connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS, queryTimeoutMs: e.DATABASE_QUERY_TIMEOUT_MS, keepAliveIdleMs: e.DATABASE_KEEPALIVE_IDLE_MS }),
      kafka: defined({
        connectionTimeoutMs: e.KAFKA_CONNECTION_TIMEOUT_MS,
        authenticationTimeoutMs: e.KAFKA_AUTHENTICATION_TIMEOUT_MS,
        requestTimeoutMs: e.KAFKA_REQUEST_TIMEOUT_MS,
        keepAliveIdleMs: e.KAFKA_KEEPALIVE_IDLE_MS,
        brokerRoutes: e.KAFKA_BROKER_ROUTES === undefined ? undefined : parseBrokerRoutes(e.KAFKA_BROKER_ROUTES),
      }),
      health: defined({ intervalMs: e.HEALTH_CHECK_INTERVAL_MS, timeoutMs: e.HEALTH_CHECK_TIMEOUT_MS, failures: e.HEALTH_CHECK_FAILURES, failingForMs: e.HEALTH_CHECK_FAILING_FOR_MS }),
    }),
    kafka: defined({
      brokers: e.KAFKA_BROKERS?.split(',').map((b) => b.trim()).filter(Boolean),
      ssl,
      sasl,
      topic: e.KAFKA_TOPIC,
      deadLetterTopic: e.KAFKA_DEAD_LETTER_TOPIC,
      routes: e.KAFKA_TOPIC_ROUTES === undefined ? undefined : parseTopicRoutes(e.KAFKA_TOPIC_ROUTES),
      partitions: e.KAFKA_PARTITIONS,
      topicRetentionMs: e.KAFKA_TOPIC_RETENTION_MS,
      maxMessageBytes: e.KAFKA_MAX_MESSAGE_BYTES,
      leanEncoder: flag(e.KAFKAJS_LEAN_ENCODER),
      retentionCheckMs: e.KAFKA_RETENTION_CHECK_MS,
      consumerGroup: e.CONSUMER_GROUP,
      maxConsumerLagMs: e.CONSUMER_MAX_LAG_MS,
      replicationFactor: e.KAFKA_REPLICATION_FACTOR,
      minInsyncReplicas: e.KAFKA_MIN_INSYNC_REPLICAS,
      cloudEvents: {
        // Modes other than binary and structured are reported by resolveConfig, with the option's name.
        topics: parseTopicRoutes(e.CLOUDEVENTS_TOPICS ?? '') as Record<string, CloudEventsMode>,
        ...defined({ source: e.CLOUDEVENTS_SOURCE, subject: e.CLOUDEVENTS_SUBJECT, dataSchemas: e.CLOUDEVENTS_DATASCHEMAS === undefined ? undefined : parseTopicRoutes(e.CLOUDEVENTS_DATASCHEMAS) }),
      },
      schemaRegistry: schemaRegistryFromEnv(e, problems),
    }),
    temporal: defined({
      ...temporalFromEnv(env, problems, notices),
      uiUrl: e.TEMPORAL_UI_URL,
      connectTimeoutMs: e.TEMPORAL_CONNECT_TIMEOUT_MS,
      callTimeoutMs: e.TEMPORAL_CALL_TIMEOUT_MS,
    }),
    relay: defined({
      shards: e.RELAY_SHARDS,
      batchSize: e.RELAY_BATCH_SIZE,
      maxAttempts: e.RELAY_MAX_ATTEMPTS,
      batchMaxBytes: e.RELAY_BATCH_MAX_BYTES,
      taskQueue: e.RELAY_TASK_QUEUE,
      workflowIdPrefix: e.RELAY_WORKFLOW_ID_PREFIX,
      idleWaitMs: e.RELAY_IDLE_WAIT_MS,
      drainGraceMs: e.RELAY_DRAIN_GRACE_MS,
      fallbackPollMs: e.RELAY_FALLBACK_POLL_MS,
      fullScanIntervalMs: e.RELAY_FULL_SCAN_INTERVAL_MS,
      memoryLogMs: e.RELAY_MEMORY_LOG_MS,
    }),
    inbox: defined({ retentionMs: e.INBOX_RETENTION_MS }),
    consumer: defined({
      inboxName: e.INBOX_CONSUMER,
      taskQueue: e.CONSUMER_TASK_QUEUE,
      batchSize: e.CONSUMER_BATCH_SIZE,
      batchMaxBytes: e.CONSUMER_BATCH_MAX_BYTES,
      maxInFlight: e.CONSUMER_MAX_IN_FLIGHT,
      fetchAheadMinEvents: e.CONSUMER_FETCH_AHEAD_MIN_EVENTS,
      coalesceWindowMs: e.CONSUMER_COALESCE_WINDOW_MS,
      fetchMaxWaitMs: e.CONSUMER_FETCH_MAX_WAIT_MS,
      fetchMaxBytes: e.CONSUMER_FETCH_MAX_BYTES,
      fetchMaxPartitionBytes: e.CONSUMER_FETCH_MAX_PARTITION_BYTES,
      sessionTimeoutMs: e.CONSUMER_SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: e.CONSUMER_REBALANCE_TIMEOUT_MS,
      deadLetter: flag(e.CONSUMER_DEAD_LETTER),
      deadLetterRetryMs: e.CONSUMER_DEAD_LETTER_RETRY_MS,
      deadLetterMaxAttempts: e.CONSUMER_DEAD_LETTER_MAX_ATTEMPTS,
      unknownEventTypes: e.CONSUMER_UNKNOWN_EVENT_TYPES,
    }),
    retention: defined({
      windowMs: e.RETENTION_WINDOW_MS,
      parkedRetentionMs: e.PARKED_RETENTION_MS,
      statementTimeoutMs: e.RETENTION_STATEMENT_TIMEOUT_MS,
      interval: e.RETENTION_INTERVAL,
      batchSize: e.RETENTION_BATCH_SIZE,
      batchPauseMs: e.RETENTION_BATCH_PAUSE_MS,
      timeBudgetMs: e.RETENTION_TIME_BUDGET_MS,
      taskQueue: e.RETENTION_TASK_QUEUE,
      scheduleId: e.RETENTION_SCHEDULE_ID,
    }),
    audit: defined({
      windowMs: e.AUDIT_WINDOW_MS,
      settleMs: e.AUDIT_SETTLE_MS,
      interval: e.AUDIT_INTERVAL,
      scheduleId: e.AUDIT_SCHEDULE_ID,
      taskQueue: e.AUDIT_TASK_QUEUE,
      readTopics: flag(e.AUDIT_READ_TOPICS),
      maxTopicMessages: e.AUDIT_MAX_TOPIC_MESSAGES,
      consumers: e.AUDIT_CONSUMERS?.split(',').map((entry) => {
        const [consumer, types] = entry.split('=') as [string, string];
        return { consumer, eventTypes: types.split('|') };
      }),
    }),
    doctor: defined({ maxPendingAgeMs: e.DOCTOR_MAX_PENDING_AGE_MS, maxConsumerWaitMs: e.DOCTOR_MAX_CONSUMER_WAIT_MS, maxHorizonAgeMs: e.DOCTOR_MAX_HORIZON_AGE_MS }),
    metrics: defined({ portBase: metricsPortBase === 0 ? undefined : metricsPortBase, host: e.METRICS_HOST, sampleMs: e.METRICS_SAMPLE_MS }),
    tracing: defined({
      otlpTracesUrl,
      otlpHeaders: e.OTEL_EXPORTER_OTLP_HEADERS === undefined ? undefined : parseOtlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS),
      serviceName: e.OTEL_SERVICE_NAME,
      sampleRatio: e.OTEL_TRACES_SAMPLER_ARG,
    }),
    logLevel: e.LOG_LEVEL,
    cacheDir: e.OUTBOX_CACHE_DIR,
  });
}

/** kafka.schemaRegistry from SCHEMA_REGISTRY_*; undefined without a URL (topics without one is a mistake). */
function schemaRegistryFromEnv(e: RawEnv, problems: string[]): SchemaRegistryOptions | undefined {
  if (e.SCHEMA_REGISTRY_URL === undefined) {
    if (e.SCHEMA_REGISTRY_TOPICS !== undefined) problems.push('SCHEMA_REGISTRY_TOPICS is set but SCHEMA_REGISTRY_URL is not: name the registry');
    return undefined;
  }
  return defined({
    url: e.SCHEMA_REGISTRY_URL,
    topics: e.SCHEMA_REGISTRY_TOPICS === undefined ? undefined : parseRegistryTopics(e.SCHEMA_REGISTRY_TOPICS),
    subjectNaming: e.SCHEMA_REGISTRY_SUBJECT_NAMING,
    requestTimeoutMs: e.SCHEMA_REGISTRY_TIMEOUT_MS,
    username: e.SCHEMA_REGISTRY_USERNAME,
    password: e.SCHEMA_REGISTRY_PASSWORD,
  });
}

/** The object without its undefined members: an unset variable must not hide a default. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The library's settings from environment variables (process.env unless given): the adapter the
 * CLI and the bundled workers use. Pure apart from reading the files variables name.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const clean = emptyAsUnset(env);
  const parsed = settings.safeParse(clean);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)));
  }
  const problems: string[] = [];
  const notices: string[] = [];
  const options = optionsFromEnv(parsed.data, clean, problems, notices);
  if (problems.length > 0) throw new ConfigError(problems);
  return resolveConfig(options, notices);
}

/** `a=1,b=x%20y` → { a: '1', b: 'x y' } (values percent-decoded, as the OTLP exporter spec says). */
function parseOtlpHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    const value = pair.slice(at + 1).trim();
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(value);
    } catch {
      headers[pair.slice(0, at).trim()] = value;
    }
  }
  return headers;
}

/** `a:1=b:2,c:3=d:4` → { 'a:1': 'b:2', ... }: where to connect for a broker advertised as a:1. */
export function parseBrokerRoutes(text: string): Record<string, string> {
  const pairs = text.split(',').map((p) => p.trim().split('=').map((side) => side.trim()));
  return Object.fromEntries(pairs.filter((p) => p.length === 2 && p[0] && p[1]));
}

function brokerRouteProblems(text: string): string[] {
  const pair = /^[^=,\s]+:\d+=[^=,\s]+:\d+$/;
  return text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p && !pair.test(p))
    .map((p) => `KAFKA_BROKER_ROUTES: "${p}" is not advertised-host:port=reachable-host:port`);
}

const TOPIC_NAME = /^[A-Za-z0-9._-]{1,200}$/;

/** `a=t1,b=t2` → { a: 't1', b: 't2' }; call only on text topicRouteProblems accepted. */
export function parseTopicRoutes(text: string): Record<string, string> {
  const routes: Record<string, string> = {};
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    routes[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return routes;
}

function topicRouteProblems(text: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    const type = at < 0 ? '' : pair.slice(0, at).trim();
    const topic = at < 0 ? '' : pair.slice(at + 1).trim();
    if (type === '' || topic === '') problems.push(`"${pair}" must look like event_type=topic`);
    else if (!TOPIC_NAME.test(topic)) problems.push(`"${topic}" (for ${type}) must be a valid Kafka topic name`);
    else if (seen.has(type)) problems.push(`event type ${type} is routed twice`);
    seen.add(type);
  }
  return problems;
}

/** `name=value` pairs, comma-separated, each side non-empty, no name twice (`form` says what a pair looks like). */
function pairProblems(text: string, form: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const pair of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = pair.indexOf('=');
    const name = at < 0 ? '' : pair.slice(0, at).trim();
    if (name === '' || pair.slice(at + 1).trim() === '') problems.push(`"${pair}" must look like ${form}`);
    else if (seen.has(name)) problems.push(`${name} is given twice`);
    seen.add(name);
  }
  return problems;
}

/** `FOO=` in a shell means "not set" to most people; treat it so. */
function emptyAsUnset(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((kv): kv is [string, string] => kv[1] !== undefined && kv[1] !== ''));
}

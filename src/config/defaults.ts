import path from 'node:path';
import { RELAY_WORKFLOW_ID_PREFIX, RETENTION_SCHEDULE_ID, AUDIT_SCHEDULE_ID, TASK_QUEUES } from './constants';
import type { Settings } from './settings';
import { DEFAULT_SCHEMA } from '../db/schema';

/** The package's own folder (src/config/../..), for the bundle cache's default place. */
export const PROJECT_ROOT = path.resolve(__dirname, '..', '..');

/** Defaults of database.statementTimeoutMs and lockTimeoutMs; src/db/pool.ts applies them to a pool given none. */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/**
 * Every setting's default, in one place; src/config/settings.ts says what each setting means and
 * src/config/env.ts which variable sets it. A setting absent here has none: it is optional, or
 * (database.url) a service that passes its own pool does not need it.
 */
export const DEFAULTS: Settings = {
  database: { workerUrls: {}, statementTimeoutMs: DEFAULT_STATEMENT_TIMEOUT_MS, lockTimeoutMs: DEFAULT_LOCK_TIMEOUT_MS, schema: DEFAULT_SCHEMA },
  links: {
    database: { connectTimeoutMs: 5_000, queryTimeoutMs: 35_000, keepAliveIdleMs: 5_000 },
    kafka: { connectionTimeoutMs: 5_000, authenticationTimeoutMs: 10_000, requestTimeoutMs: 15_000, keepAliveIdleMs: 5_000, brokerRoutes: {} },
    health: { intervalMs: 2_000, timeoutMs: 5_000, failures: 3, failingForMs: 10_000 },
  },
  kafka: {
    brokers: ['localhost:9092'],
    // Neutral names: a service names its own (the payments example: examples/example-settings.ts).
    // Release 0.1 defaulted to the example's names, payments.events and payments-credit: a
    // consumer worker refuses to start on such an inbox under these (docs/upgrading.md).
    topic: 'outbox.events',
    deadLetterTopic: 'outbox.events.dlq',
    routes: {},
    partitions: 6,
    topicRetentionMs: 7 * DAY,
    maxMessageBytes: 1_000_000,
    leanEncoder: false,
    retentionCheckMs: 10 * 60_000,
    consumerGroup: 'outbox-consumer',
    maxConsumerLagMs: DAY,
    replicationFactor: 1,
    // No topic in CloudEvents; source, subject and dataSchemas are completed by resolveConfig.
    cloudEvents: { topics: {} },
  },
  temporal: {
    // The SDK's and the Temporal CLI's own defaults.
    address: 'localhost:7233',
    namespace: 'default',
    uiUrl: 'http://localhost:8233',
    connectTimeoutMs: 10_000,
    callTimeoutMs: 60_000,
  },
  relay: {
    shards: 8,
    batchSize: 2000,
    maxAttempts: 5,
    batchMaxBytes: 16 * 1024 * 1024,
    workflowIdPrefix: RELAY_WORKFLOW_ID_PREFIX,
    idleWaitMs: 60_000,
    fallbackPollMs: 10_000,
    fullScanIntervalMs: 30_000,
  },
  inbox: { retentionMs: 14 * DAY },
  consumer: {
    inboxName: 'outbox-consumer',
    // 4,000 rather than 2,000: docs/measurements/consumer-log.md, "From 0.54× to 0.70×".
    batchSize: 4000,
    batchMaxBytes: 1_000_000,
    maxInFlight: 4,
    fetchAheadMinEvents: 1000,
    coalesceWindowMs: 2,
    fetchMaxWaitMs: 5000,
    // Bound the consumer's memory: a fetch is decoded whole and kept until handled (docs/measurements/consumer-log.md).
    fetchMaxBytes: 1536 * 1024,
    fetchMaxPartitionBytes: 512 * 1024,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 20_000,
    deadLetter: true,
    deadLetterRetryMs: 30_000,
    deadLetterMaxAttempts: 10,
    unknownEventTypes: 'skip',
  },
  retention: {
    windowMs: DAY,
    parkedRetentionMs: 30 * DAY,
    statementTimeoutMs: 5 * 60_000,
    interval: '10m',
    batchSize: 10_000,
    batchPauseMs: 10,
    timeBudgetMs: 5 * 60_000,
    taskQueue: TASK_QUEUES.retention,
    scheduleId: RETENTION_SCHEDULE_ID,
  },
  // 1,000,000 messages per topic and run: the 10-minute interval's traffic at up to 1,666 events/s.
  audit: { windowMs: HOUR, settleMs: 2 * 60_000, interval: '10m', scheduleId: AUDIT_SCHEDULE_ID, consumers: [], readTopics: true, maxTopicMessages: 1_000_000 },
  doctor: { maxPendingAgeMs: 5 * 60_000, maxConsumerWaitMs: 2 * 60_000, maxHorizonAgeMs: 5 * 60_000 },
  metrics: { host: '127.0.0.1', sampleMs: 15_000 },
  tracing: { otlpHeaders: {}, sampleRatio: 1 },
  logLevel: 'info',
  cacheDir: path.join(PROJECT_ROOT, '.cache'),
};

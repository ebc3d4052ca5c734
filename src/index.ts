// temporal-outbox: the public API in one module. Subpaths (temporal-outbox/outbox, /consumer,
// /relay, /retention, /audit, /doctor) give the same pieces one concern at a time.
export * from './api/outbox';
export * from './api/consumer';
export * from './api/relay';
export * from './api/retention';
export * from './api/audit';
export * from './api/doctor';
export * from './api/events';
export * from './api/schema-registry';
// Configuration: typed options with documented defaults (resolveConfig), or the environment (loadConfig).
export { resolveConfig, databaseUrl, type Config } from './config/resolve';
export { DEFAULTS } from './config/defaults';
export type { OutboxOptions, Settings } from './config/settings';
export type { CloudEventsMode, CloudEventsSettings } from './config/settings';
export { loadConfig } from './config/env';
export { ConfigError } from './config/errors';
export type { Logger } from './config/logger';
// How the project itself connects, for a service's own clients with the same settings (docs/managed-services.md).
export { temporalConnectionOptions } from './temporal/connection-options';
export { kafkaConnectionOptions, type KafkaSocketUse } from './kafka/connection-options';
export { TASK_QUEUES } from './config/constants';
export { setUp } from './setup';
export { workerEntry, type WorkerEntry, type WorkerName } from '../workers/entries';

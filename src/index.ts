// temporal-outbox: the public API in one module. Subpaths (temporal-outbox/outbox, /consumer,
// /relay, /retention, /audit, /doctor) give the same pieces one concern at a time.
export * from './api/outbox';
export * from './api/consumer';
export * from './api/relay';
export * from './api/retention';
export * from './api/audit';
export * from './api/doctor';
export { loadConfig, ConfigError, type Config } from './config/env';
// How the project itself connects, for a service's own clients with the same settings (docs/managed-services.md).
export { temporalConnectionOptions } from './temporal/connection-options';
export { kafkaConnectionOptions } from './kafka/connection-options';
export { TASK_QUEUES, PAYMENT_CONFIRMED } from './config/constants';
export { setUp } from './setup';
export { workerEntry, type WorkerEntry, type WorkerName } from '../workers/entries';
export { confirmPayment, type ConfirmPaymentResult } from '../examples/payments/confirm-payment';
export { createPayment } from '../examples/payments/create-payment';

// temporal-outbox: the public API in one module. Subpaths (temporal-outbox/outbox, /consumer,
// /relay, /retention, /audit, /doctor) give the same pieces one concern at a time.
export * from './outbox';
export * from './consumer';
export * from './relay';
export * from './retention';
export * from './audit';
export * from './doctor';
export { loadConfig, ConfigError, type Config } from '../config/env';
// How the project itself connects, for a service's own clients with the same settings (docs/managed-services.md).
export { temporalConnectionOptions } from '../temporal/connection-options';
export { kafkaConnectionOptions } from '../kafka/connection-options';
export { TASK_QUEUES, PAYMENT_CONFIRMED } from '../config/constants';
export { setUp } from '../app/setup';
export { workerEntry, type WorkerEntry, type WorkerName } from '../workers/entries';
export { confirmPayment, type ConfirmPaymentResult } from '../payments/confirm-payment';
export { createPayment } from '../payments/create-payment';

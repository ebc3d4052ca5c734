// temporal-outbox: the public API in one module. Subpaths (temporal-outbox/outbox, /consumer,
// /relay, /retention, /doctor) give the same pieces one concern at a time.
export * from './outbox';
export * from './consumer';
export * from './relay';
export * from './retention';
export * from './doctor';
export { loadConfig, ConfigError, type Config } from '../config/env';
export { TASK_QUEUES, PAYMENT_CONFIRMED } from '../config/constants';
export { setUp } from '../app/setup';
export { workerEntry, type WorkerEntry, type WorkerName } from '../workers/entries';
export { confirmPayment, type ConfirmPaymentResult } from '../payments/confirm-payment';
export { createPayment } from '../payments/create-payment';

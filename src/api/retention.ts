// Public API: retention. Run the worker and create (or update) the Temporal Schedule once.
export { runRetentionWorker, type RetentionWorkerOptions } from '../../workers/retention.worker';
export { ensureRetentionSchedule } from '../retention/schedule';

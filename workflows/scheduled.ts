// The workflows the retention worker bundles: the scheduled maintenance runs.
export { retentionWorkflow } from './retention/retention';
export { reconciliationWorkflow } from './audit/audit';

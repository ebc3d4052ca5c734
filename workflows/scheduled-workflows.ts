// The workflows the retention worker bundles: the scheduled maintenance runs.
export { retentionWorkflow } from './retention';
export { reconciliationWorkflow } from './reconciliation';

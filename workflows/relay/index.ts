// The workflows the relay worker bundles (its workflowsPath).
export { relayShardWorkflow } from './shard';

// Names shared by workers, clients, the CLI and tests. Workflow code imports this module too,
// so it must stay free of Node, pg and kafkajs imports.

export const TASK_QUEUES = {
  relay: 'outbox-relay',
  consumer: 'inbox-consumer',
  retention: 'outbox-retention',
} as const;

/**
 * Search attributes the workflows upsert; `stack up` registers every one. The dev server's
 * SQLite visibility store allows only three custom Int attributes per namespace, so counters
 * beyond these three live in each workflow's current details and `status` query instead.
 */
export const SEARCH_ATTRIBUTES = {
  relayShard: { name: 'OutboxRelayShard', type: 'Int' },
  relayPublished: { name: 'OutboxRelayPublished', type: 'Int' },
  relayPending: { name: 'OutboxRelayPending', type: 'Int' },
  relayStatus: { name: 'OutboxRelayStatus', type: 'Keyword' },
} as const;

export const RELAY_WORKFLOW_TYPE = 'relayShardWorkflow';
export const RETENTION_WORKFLOW_TYPE = 'retentionWorkflow';

export const RELAY_WORKFLOW_ID_PREFIX = 'outbox-relay-shard';

/** Workflow id of one relay shard: fixed, so Temporal itself refuses a second relay for it. */
export function relayWorkflowId(shardIndex: number): string {
  return `${RELAY_WORKFLOW_ID_PREFIX}-${shardIndex}`;
}

export const RETENTION_SCHEDULE_ID = 'outbox-retention';

/** The event type the payments service emits and the consumers apply. */
export const PAYMENT_CONFIRMED = 'payment_confirmed';

// Names shared by workers, clients, the CLI and tests. Workflow code imports this module too,
// so it must stay free of Node, pg and kafkajs imports.

export const TASK_QUEUES = {
  relay: 'outbox-relay',
  consumer: 'inbox-consumer',
  retention: 'outbox-retention',
} as const;

/**
 * Search attributes the workflows upsert; `stack up` registers every one. The dev server's
 * SQLite visibility store (CLI 1.9.1, server 1.32.0, as `temporal operator search-attribute
 * create` reports) allows only three custom attributes per type for Int, Double,
 * KeywordList (and Bool, Datetime, Text) and ten Keyword, and refuses a value over 2 KB; so
 * counters beyond these live in each workflow's current details and `status` query instead.
 */
export const SEARCH_ATTRIBUTES = {
  relayShard: { name: 'OutboxRelayShard', type: 'Int' },
  relayPublished: { name: 'OutboxRelayPublished', type: 'Int' },
  relayPending: { name: 'OutboxRelayPending', type: 'Int' },
  relayStatus: { name: 'OutboxRelayStatus', type: 'Keyword' },
  /** Audit runs: 'clean' or 'drift'. */
  auditStatus: { name: 'OutboxAuditStatus', type: 'Keyword' },
  /** Audit runs: what drifted, as event:<id> and the checks' own keys (customer:<id>, ...) (as many as fit in 2 KB). */
  auditFindings: { name: 'OutboxAuditFindings', type: 'KeywordList' },
  /**
   * The consumer's applyEventsWorkflow runs: the inbox (consumer) they apply to, the topics,
   * partitions and offsets they cover. Topics are a KeywordList (a batch may span several
   * topics; `OutboxKafkaTopics = 't'` matches any run holding t), the third and last KeywordList.
   */
  consumerName: { name: 'OutboxConsumer', type: 'Keyword' },
  consumerTopics: { name: 'OutboxKafkaTopics', type: 'KeywordList' },
  consumerPartitions: { name: 'OutboxKafkaPartitions', type: 'KeywordList' },
  consumerOffsetMin: { name: 'OutboxKafkaOffsetMin', type: 'Double' },
  consumerOffsetMax: { name: 'OutboxKafkaOffsetMax', type: 'Double' },
} as const;

export const RELAY_WORKFLOW_ID_PREFIX = 'outbox-relay-shard';

/** Workflow id of one relay shard: fixed, so Temporal itself refuses a second relay for it. */
export function relayWorkflowId(shardIndex: number): string {
  return `${RELAY_WORKFLOW_ID_PREFIX}-${shardIndex}`;
}

export const RETENTION_SCHEDULE_ID = 'outbox-retention';

export const AUDIT_SCHEDULE_ID = 'outbox-audit';


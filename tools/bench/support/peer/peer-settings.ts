import type { PollingListenerConfig, ReplicationListenerConfig } from 'pg-transactional-outbox';

/** What the benchmark passes to a peer listener process. */
export interface PeerListenerOptions {
  kind: 'polling' | 'replication';
  databaseUrl: string;
  table: string;
  /** Replication only: publication and slot, created by setupPeerOutbox. */
  publication: string;
  slot: string;
  /** Polling only: the next-messages function and its batch size (the package's default is 5). */
  nextMessagesFunction: string;
  batchSize: number;
}

/**
 * The package's listener configuration for our benchmark table: its defaults, except the ones an
 * outbox needs named (table, publication, slot, function) and the polling batch size under test.
 * Max-attempts and poisonous-message protection off, as the README's outbox example has them.
 */
export function peerListenerSettings(o: PeerListenerOptions): { kind: 'replication'; config: ReplicationListenerConfig } | { kind: 'polling'; config: PollingListenerConfig } {
  const base = { dbSchema: 'public', dbTable: o.table, enableMaxAttemptsProtection: false, enablePoisonousMessageProtection: false };
  const dbListenerConfig = { connectionString: o.databaseUrl };
  if (o.kind === 'replication') {
    return { kind: 'replication', config: { outboxOrInbox: 'outbox', dbListenerConfig, settings: { ...base, dbPublication: o.publication, dbReplicationSlot: o.slot } } };
  }
  return { kind: 'polling', config: { outboxOrInbox: 'outbox', dbListenerConfig, settings: { ...base, nextMessagesFunctionName: o.nextMessagesFunction, nextMessagesBatchSize: o.batchSize } } };
}

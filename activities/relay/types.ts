// Inputs and outputs of the relay activities. Only ids and counters cross into workflow
// history; row bodies stay in PostgreSQL and are read by the activity that sends them.

export interface FetchPendingBatchInput {
  shardIndex: number;
  shardCount: number;
  limit: number;
  /** Also count the shard's pending/parked rows (a bounded scan), for the status display. */
  countBacklog: boolean;
  /** Count them as well whenever the batch is short (the default): false leaves it to countBacklog. */
  countWhenShort?: boolean;
  /** Check the shard count against outbox_relay_layout first (the default); a session checks once a second. */
  checkLayout?: boolean;
  /** Ids being marked published right now (the previous batch, already on Kafka): not pending work. */
  excludeIds?: number[];
}
export interface FetchPendingBatchOutput {
  ids: number[];
  backlog?: { pending: number; parked: number };
}

export interface PublishBatchInput {
  shardIndex: number;
  ids: number[];
}
export interface PublishBatchOutput {
  /** Ids acknowledged by Kafka (acks = all), to be marked published. */
  sentIds: number[];
  /** Rows parked now: malformed, too large, or out of attempts. */
  parkedIds: number[];
  /** Rows that failed this time and stay pending (attempts counted), with their key held back. */
  failedIds: number[];
}

export interface MarkPublishedInput {
  ids: number[];
}
export interface MarkPublishedOutput {
  marked: number;
}

export interface WaitForPendingEventsInput {
  shardIndex: number;
  shardCount: number;
  timeoutMs: number;
}
export interface WaitForPendingEventsOutput {
  /** 'pending': the shard has work; 'timeout': nothing arrived in timeoutMs. */
  outcome: 'pending' | 'timeout';
  waitedMs: number;
}

export interface RelaySessionInput {
  shardIndex: number;
  shardCount: number;
  batchSize: number;
  /** End after this many batches (the workflow's batch budget, when the run has one). */
  maxBatches?: number;
  /** End after this long even under a steady backlog, so counters and placement are refreshed. */
  sessionMs: number;
  /** How long a drained shard waits in the session for more rows before going idle. */
  drainGraceMs: number;
  /** Workers the workflow stopped trusting (a session there timed out): not counted as live (src/outbox/relay-avoidance.ts). */
  avoid?: string[];
  /** For each avoided worker, when its failed session was placed (PlaceRelayShardOutput.readAt). */
  avoidSince?: Record<string, number>;
}
export interface RelaySessionProgress {
  workerId: string;
  state: 'locking' | 'running' | 'backing-off';
  published: number;
  batches: number;
}
export interface RelaySessionOutput {
  /** The worker that ran the session. */
  workerId: string;
  ended: 'drained' | 'time-up' | 'batch-budget' | 'moved' | 'cancelled' | 'failed';
  published: number;
  batches: number;
  parked: number;
  /** Highest id published in this session (0 if none). */
  lastId: number;
  backlog?: { pending: number; parked: number };
}

export interface PlaceRelayShardInput {
  shardIndex: number;
  shardCount: number;
  avoid?: string[];
  avoidSince?: Record<string, number>;
}
export interface PlaceRelayShardOutput {
  /** Undefined when no relay worker is live (none has heartbeated within its TTL). */
  workerId?: string;
  taskQueue?: string;
  liveWorkers: number;
  /** When the live set was read (the database's clock, ms since the epoch). */
  readAt?: number;
}

// Inputs and outputs of the relay activities. Only ids and counters cross into workflow
// history; row bodies stay in PostgreSQL and are read by the activity that sends them.

export interface FetchPendingBatchInput {
  shardIndex: number;
  shardCount: number;
  limit: number;
  /** Also count the shard's pending/parked rows (a bounded scan), for the status display. */
  countBacklog: boolean;
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

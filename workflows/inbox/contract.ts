import type { RawValue } from '@temporalio/common';

// The inbox's workflow contract, shared by the workflow, its activities, the consumer worker
// and tests. No Node, pg or kafkajs imports: workflow code imports this module. Node code starts
// the workflows by these names and types, never loading workflow code; a rename is a compile error.

/**
 * Events one applyEventsWorkflow applies for one consumer, columnar and index-aligned (the
 * workflow input is kept compact: a batch is up to CONSUMER_BATCH_SIZE events). Offsets are
 * decimal strings; `data` is what each event's handler `validate` returned.
 */
export interface EventBatch {
  /** Inbox identity (not the Kafka group: a replay by another group must still dedupe). */
  consumer: string;
  /** Distinct topics of the batch; `topicIndex[i]` points into it. */
  topics: string[];
  eventIds: string[];
  eventTypes: string[];
  topicIndex: number[];
  partitions: number[];
  offsets: string[];
  data: unknown[];
  /** Fingerprint of each event's payload (src/inbox/payload-hash.ts): a redelivered id with another one is a conflict. */
  payloadHashes: string[];
  /**
   * Each event's W3C `traceparent` from its Kafka headers (null: none); absent when no event of
   * the batch carries one. The handler's span per event continues that trace.
   */
  traceparents?: (string | null)[];
}

/**
 * What an applyEventsWorkflow is started with: the batch, or the batch already encoded as its
 * payload (the consumer encodes it once; src/inbox/batch-hand-off.ts). The workflow passes its input to
 * its activity without decoding it, so either form reaches the activity as the same payload.
 */
export type EventBatchInput = EventBatch | RawValue<EventBatch>;

export interface EventBatchResult {
  /** Events applied by this call. */
  applied: number;
  /** Events already in the inbox (earlier delivery, or repeated within this batch). */
  duplicates: number;
  /** Events a handler refused (e.g. a missing row): parked with the reason, not applied. */
  rejected: number;
  /** Redeliveries of an applied (or batch-mate) event id with a different payload: parked with both versions. */
  conflicts: number;
}

/** Failure types the inbox's activities raise; never retried (retrying cannot fix them). */
export const INBOX_FAILURES = {
  /** The batch's columns disagree in length: a bug, not a transient condition. */
  invalidBatch: 'InvalidEventBatch',
  /** The batch holds an event type no handler of this worker knows (task queue shared by workers with different handlers). */
  noHandler: 'NoHandlerForEventType',
} as const;

/** The workflows the consumer worker bundles (workflows/inbox/index.ts; workflows/contracts-implemented.ts checks it). */
export interface InboxWorkflows {
  applyEventsWorkflow: (batch: EventBatchInput) => Promise<EventBatchResult>;
  redriveParkedEventsWorkflow: (request: RedriveRequest) => Promise<RedriveResult>;
}

export type ApplyEventsWorkflow = InboxWorkflows['applyEventsWorkflow'];
/** Workflow type of one batch (`client.workflow.execute<ApplyEventsWorkflow>(APPLY_EVENTS_WORKFLOW, …)`). */
export const APPLY_EVENTS_WORKFLOW = 'applyEventsWorkflow' satisfies keyof InboxWorkflows;

export type RedriveParkedEventsWorkflow = InboxWorkflows['redriveParkedEventsWorkflow'];
/** Redrives parked events of one consumer (`outbox inbox redrive`); runs on the consumer's task queue. */
export const REDRIVE_PARKED_EVENTS_WORKFLOW = 'redriveParkedEventsWorkflow' satisfies keyof InboxWorkflows;

export interface RedriveRequest {
  consumer: string;
  /** Parked row ids; absent = every parked row of the consumer not yet redriven. */
  ids?: string[];
}

/** One page of a redrive, as the activity takes it. */
export interface RedriveInput extends RedriveRequest {
  /** Only rows with a larger id (paging); absent = from the start. */
  afterId?: string;
  limit: number;
}

export interface RedriveResult {
  /** Parked rows whose event is now applied (by this redrive, or found already applied). */
  redriven: string[];
  /** Parked rows the handler refused again (the cause is not fixed yet); still parked. */
  stillParked: string[];
  /** Parked rows that hold no event to apply, with why. */
  notRedrivable: { id: string; why: string }[];
  /** Events applied now, and events the inbox already held (credited before: not again). */
  applied: number;
  duplicates: number;
  /** The last row id of this page; absent when the page was empty. */
  lastId?: string;
}

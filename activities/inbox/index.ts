import { ApplicationFailure, Context, setActivityOptions } from '@temporalio/activity';
import { defaultPayloadConverter, RawValue, rawValueTypeInfo } from '@temporalio/common';
import type { Pool } from 'pg';
import { applyEvents, MissingHandlerError } from '../../src/inbox/apply-events';
import { inTransaction } from '../../src/db/pool';
import type { InFlightBatches } from '../../src/inbox/batch-hand-off';
import { redriveParkedEvents } from '../../src/inbox/redrive-parked-events';
import type { HandlerRegistry } from '../../src/inbox/handler';
import { INBOX_FAILURES, type EventBatch, type EventBatchInput, type EventBatchResult, type RedriveInput, type RedriveResult } from '../../workflows/inbox/contract';
import { recordHandlerCall } from '../../src/observability/consumer-metrics';

export type { EventBatch, EventBatchResult };

/**
 * The inbox's activities. Both are idempotent by construction: the inbox row and the effect
 * commit together, so Temporal may retry them (or a redelivered batch may re-run them) freely.
 */
export function createInboxActivities({ pool, handlers, inFlight, consumerGroup }: { pool: Pool; handlers: HandlerRegistry; inFlight?: InFlightBatches; consumerGroup?: string }) {
  const activities = {
    async applyEvents(input: EventBatchInput): Promise<EventBatchResult> {
      const batch = input instanceof RawValue ? batchOf(input, inFlight) : input;
      const n = batch.eventIds.length;
      const columns = [batch.eventTypes, batch.topicIndex, batch.partitions, batch.offsets, batch.data, batch.payloadHashes, ...(batch.traceparents ? [batch.traceparents] : [])];
      if (columns.some((c) => c.length !== n) || batch.topicIndex.some((t) => batch.topics[t] === undefined)) {
        throw ApplicationFailure.create({
          type: INBOX_FAILURES.invalidBatch,
          nonRetryable: true,
          message: `event batch columns differ in length or point at no topic (${n} ids; ${columns.map((c) => c.length).join(', ')})`,
        });
      }
      try {
        const started = performance.now();
        const { appliedByType, ...result } = await applyEvents(pool, handlers, batch, consumerGroup);
        // Refused and conflicting events are parked by this call (a retry may count them again).
        recordHandlerCall(batch.consumer, n, { appliedByType, duplicates: result.duplicates, rejected: result.rejected, conflicts: result.conflicts }, performance.now() - started);
        return result;
      } catch (err) {
        if (err instanceof MissingHandlerError) throw ApplicationFailure.create({ type: INBOX_FAILURES.noHandler, nonRetryable: true, message: err.message });
        throw err;
      }
    },

    /** One page of a redrive of parked events: locked, applied through the inbox guard, marked, in one transaction. */
    async redriveParkedEvents(input: RedriveInput): Promise<RedriveResult> {
      try {
        return await inTransaction(pool, (tx) => redriveParkedEvents(tx, handlers, input));
      } catch (err) {
        if (err instanceof MissingHandlerError) throw ApplicationFailure.create({ type: INBOX_FAILURES.noHandler, nonRetryable: true, message: err.message });
        throw err;
      }
    },
  };
  // The batch arrives as its payload (no decoding by the SDK): batchOf takes it from memory when
  // this process started the workflow, and decodes it only otherwise.
  setActivityOptions({ typeInfo: { inputTypes: [rawValueTypeInfo] } }, activities.applyEvents);
  return activities;
}

function batchOf(input: RawValue<EventBatch>, inFlight: InFlightBatches | undefined): EventBatch {
  const workflowId = inFlight && Context.current().info.workflowExecution?.workflowId;
  const held = workflowId ? inFlight.find(workflowId, input.payload) : undefined;
  return held ?? (defaultPayloadConverter.fromPayload(input.payload) as EventBatch);
}

export type InboxActivities = ReturnType<typeof createInboxActivities>;

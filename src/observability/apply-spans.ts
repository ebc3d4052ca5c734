import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Link } from '@opentelemetry/api';
import type { EventBatch } from '../../workflows/inbox/contract';
import { errorType, MESSAGING, messagingAttributes, messagingSpanName } from './messaging-attributes';
import { contextFromHeaders, linksToActive, outboxTracer } from './trace-context';

// Links a batch span keeps: enough to reach the traces of a batch's first events from it.
const MAX_BATCH_LINKS = 128;

/**
 * Runs `start` (the applyEventsWorkflow's start and wait) inside a `process <topic>` span of its
 * own (CONSUMER, with the batch's message count; the operation alone when the batch spans several
 * topics), linked to the traces of the events it carries: the workflow and its activity, traced by
 * Temporal's interceptors, are that span's children, and each event's span links back to them.
 */
export async function withApplyBatchSpan<T>(batch: EventBatch, workflowId: string, start: () => Promise<T>, consumerGroup?: string): Promise<T> {
  const links: Link[] = [];
  for (const traceparent of batch.traceparents ?? []) {
    const spanContext = trace.getSpanContext(contextFromHeaders({ traceparent }) ?? ROOT_CONTEXT);
    if (spanContext) links.push({ context: spanContext });
    if (links.length === MAX_BATCH_LINKS) break;
  }
  const topic = batch.topics.length === 1 ? batch.topics[0] : undefined;
  const attributes: Attributes = { ...messagingAttributes('process', topic), [MESSAGING.batchMessageCount]: batch.eventIds.length, 'inbox.consumer': batch.consumer, 'temporal.workflow_id': workflowId };
  if (consumerGroup !== undefined) attributes[MESSAGING.consumerGroup] = consumerGroup;
  return outboxTracer().startActiveSpan(
    messagingSpanName('process', topic),
    { kind: SpanKind.CONSUMER, links, attributes },
    ROOT_CONTEXT,
    async (span) => {
      try {
        return await start();
      } catch (err) {
        span.recordException(err as Error);
        span.setAttribute(MESSAGING.errorType, errorType(err));
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
        throw err;
      } finally {
        span.end();
      }
    },
  );
}

/** What the inbox guard did with one event of a batch. */
export type EventOutcome = 'applied' | 'duplicate' | 'rejected' | 'conflict';

/**
 * The consumer's `process <topic>` span per event that came with a trace: a child of the relay's
 * send span (the event's `traceparent` from its Kafka headers), linked to the applyEvents
 * activity's span (one batch, many traces), from the batch's start to its COMMIT. Its outcome says
 * whether the effect was applied, absorbed as a duplicate, or parked (rejected by the handler, or
 * a conflicting redelivery; `error.type` says which): the answer to "where is this event now" for one trace.
 */
export function recordApplySpans(batch: EventBatch, outcomes: readonly EventOutcome[], startTime: Date, consumerGroup?: string): void {
  if (!batch.traceparents) return;
  const links = linksToActive(context.active());
  const tracer = outboxTracer();
  batch.traceparents.forEach((traceparent, i) => {
    const parent = contextFromHeaders({ traceparent });
    if (!parent) return;
    const outcome = outcomes[i]!;
    const topic = batch.topics[batch.topicIndex[i]!]!;
    const attributes: Attributes = {
      ...messagingAttributes('process', topic),
      [MESSAGING.partitionId]: String(batch.partitions[i]),
      [MESSAGING.kafkaOffset]: Number(batch.offsets[i]),
      [MESSAGING.messageId]: batch.eventIds[i],
      'inbox.consumer': batch.consumer,
      'inbox.event_type': batch.eventTypes[i],
      'inbox.outcome': outcome,
    };
    if (consumerGroup !== undefined) attributes[MESSAGING.consumerGroup] = consumerGroup;
    const span = tracer.startSpan(messagingSpanName('process', topic), { kind: SpanKind.CONSUMER, startTime, links, attributes }, parent);
    if (outcome === 'rejected' || outcome === 'conflict') {
      span.setAttribute(MESSAGING.errorType, outcome);
      span.setStatus({ code: SpanStatusCode.ERROR, message: `parked: ${outcome} (npx temporal-outbox inbox parked)` });
    } else span.setStatus({ code: SpanStatusCode.OK });
    span.end();
  });
}

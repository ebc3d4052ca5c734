import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Link } from '@opentelemetry/api';
import type { EventBatch } from '../../workflows/inbox/contract';
import { contextFromHeaders, linksToActive, outboxTracer } from './trace-context';

// Links a batch span keeps: enough to reach the traces of a batch's first events from it.
const MAX_BATCH_LINKS = 128;

/**
 * Runs `start` (the applyEventsWorkflow's start and wait) inside a span of its own, linked to the
 * traces of the events it carries: the workflow and its activity, traced by Temporal's
 * interceptors, are that span's children, and each event's apply span links back to them.
 */
export async function withApplyBatchSpan<T>(batch: EventBatch, workflowId: string, start: () => Promise<T>): Promise<T> {
  const links: Link[] = [];
  for (const traceparent of batch.traceparents ?? []) {
    const spanContext = trace.getSpanContext(contextFromHeaders({ traceparent }) ?? ROOT_CONTEXT);
    if (spanContext) links.push({ context: spanContext });
    if (links.length === MAX_BATCH_LINKS) break;
  }
  return outboxTracer().startActiveSpan(
    `inbox apply batch ${batch.consumer}`,
    { kind: SpanKind.INTERNAL, links, attributes: { 'inbox.consumer': batch.consumer, 'inbox.events': batch.eventIds.length, 'temporal.workflow_id': workflowId } },
    ROOT_CONTEXT,
    async (span) => {
      try {
        return await start();
      } catch (err) {
        span.recordException(err as Error);
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
 * The consumer's span per event that came with a trace: a child of the relay's publish span (the
 * event's `traceparent` from its Kafka headers), linked to the applyEvents activity's span (one
 * batch, many traces), from the batch's start to its COMMIT. Its outcome says whether the effect
 * was applied, absorbed as a duplicate, or parked (rejected by the handler, or a conflicting
 * redelivery): the answer to "where is this event now" for one trace.
 */
export function recordApplySpans(batch: EventBatch, outcomes: readonly EventOutcome[], startTime: Date): void {
  if (!batch.traceparents) return;
  const links = linksToActive(context.active());
  const tracer = outboxTracer();
  batch.traceparents.forEach((traceparent, i) => {
    const parent = contextFromHeaders({ traceparent });
    if (!parent) return;
    const outcome = outcomes[i]!;
    const span = tracer.startSpan(
      `inbox apply ${batch.eventTypes[i]}`,
      {
        kind: SpanKind.CONSUMER,
        startTime,
        links,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'process',
          'messaging.destination.name': batch.topics[batch.topicIndex[i]!],
          'messaging.destination.partition.id': String(batch.partitions[i]),
          'messaging.kafka.offset': Number(batch.offsets[i]),
          'messaging.message.id': batch.eventIds[i],
          'inbox.consumer': batch.consumer,
          'inbox.event_type': batch.eventTypes[i],
          'inbox.outcome': outcome,
        },
      },
      parent,
    );
    if (outcome === 'rejected' || outcome === 'conflict') span.setStatus({ code: SpanStatusCode.ERROR, message: `parked: ${outcome} (npx temporal-outbox inbox parked)` });
    else span.setStatus({ code: SpanStatusCode.OK });
    span.end();
  });
}

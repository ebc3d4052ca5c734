import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { OutboxKafkaMessage } from '../outbox/kafka-message';
import { errorType, MESSAGING, messagingAttributes, messagingSpanName } from './messaging-attributes';
import { contextFromHeaders, headersFromContext, linksToActive, outboxTracer } from './trace-context';

/** One message about to be sent, with the topic it goes to. */
export interface TracedMessage {
  outboxId: number;
  eventId: string;
  eventType: string;
  topic: string;
  message: OutboxKafkaMessage;
}

export interface PublishSpans {
  /** Ends every span: OK for the sent ids, an error status for the rest (parked, failed, or the send threw). */
  end(sentIds: ReadonlySet<number>, error?: unknown): void;
}

/**
 * The relay's `send <topic>` span per published event (messaging-attributes.ts): child of the trace the row was enqueued with (its
 * `traceparent` header), linked to the publish activity's span (one batch, many traces), and
 * written back into the message's `traceparent`, so the consumer's span is its child. Rows that
 * carry no trace get none: the relay continues traces, it does not start one per event.
 */
export function startPublishSpans(items: readonly TracedMessage[]): PublishSpans {
  const active = context.active();
  const links = linksToActive(active);
  const spans: { outboxId: number; span: Span }[] = [];
  for (const item of items) {
    const parent = contextFromHeaders(item.message.headers);
    if (!parent) continue;
    const span = outboxTracer().startSpan(
      messagingSpanName('send', item.topic),
      {
        kind: SpanKind.PRODUCER,
        links,
        attributes: {
          ...messagingAttributes('send', item.topic),
          [MESSAGING.messageId]: item.eventId,
          [MESSAGING.kafkaMessageKey]: item.message.key,
          'outbox.id': item.outboxId,
          'outbox.event_type': item.eventType,
        },
      },
      parent,
    );
    // Same length as the header it replaces, so the message's size (already checked) holds.
    Object.assign(item.message.headers, headersFromContext(trace.setSpan(parent, span)));
    spans.push({ outboxId: item.outboxId, span });
  }
  return {
    end(sentIds, error) {
      for (const { outboxId, span } of spans) {
        if (sentIds.has(outboxId)) span.setStatus({ code: SpanStatusCode.OK });
        else {
          if (error instanceof Error) span.recordException(error);
          // Parked or left for a later batch without an error of the send itself: `not_sent`.
          span.setAttribute(MESSAGING.errorType, error === undefined ? 'not_sent' : errorType(error));
          span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : 'not sent in this batch (parked, or retried later)' });
        }
        span.end();
      }
    },
  };
}

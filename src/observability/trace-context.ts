import { isSpanContextValid, ROOT_CONTEXT, trace, type Context, type Link, type SpanContext, type Tracer } from '@opentelemetry/api';
import { formatTraceContext, parseTraceparent } from './w3c-trace-context';

// The W3C trace context an event carries from enqueue, through the outbox row's `headers` and
// the Kafka message headers, to the consumer's handler. Read and written in the W3C format itself
// (w3c-trace-context.ts) rather than through the process's global propagator: the format on the table and on the
// topic is part of the wire contract (src/kafka/message-format.ts), whatever propagator (or none)
// a producer's or worker's process registered.

export const TRACE_HEADERS = { traceparent: 'traceparent', tracestate: 'tracestate' } as const;

/** Spans of this library, on whatever tracer provider the process registered (none: no-op). */
export function outboxTracer(): Tracer {
  return trace.getTracer('temporal-outbox');
}

/** The context a traceparent (and tracestate) header describes; undefined when absent or malformed. */
export function contextFromHeaders(headers: { traceparent?: unknown; tracestate?: unknown }): Context | undefined {
  if (typeof headers.traceparent !== 'string' || headers.traceparent === '') return undefined;
  const spanContext = parseTraceparent(headers.traceparent, typeof headers.tracestate === 'string' ? headers.tracestate : undefined);
  return spanContext ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : undefined;
}

/** traceparent (and tracestate, when there is one) of a context's span; {} when it has none. */
export function headersFromContext(ctx: Context): Record<string, string> {
  return formatTraceContext(ctx);
}

/** The valid span context active where this is called (an activity's RunActivity span), if any. */
export function activeSpanContext(ctx: Context): SpanContext | undefined {
  const spanContext = trace.getSpanContext(ctx);
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** A link to the active span, for spans of one event that ran inside a batch's span. */
export function linksToActive(ctx: Context): Link[] {
  const spanContext = activeSpanContext(ctx);
  return spanContext ? [{ context: spanContext }] : [];
}

import { createTraceState, isSpanContextValid, trace, TraceFlags, type Context, type SpanContext } from '@opentelemetry/api';

// The W3C Trace Context header format (https://www.w3.org/TR/trace-context/), written and read
// here with @opentelemetry/api alone, so the library's runtime needs no OpenTelemetry SDK package.
// Version 00: `00-<trace id, 32 hex>-<parent span id, 16 hex>-<flags, 2 hex>`. A later version
// may append fields after a dash, which a version-00 reader ignores; version ff is invalid.

const TRACEPARENT = /^\s?([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?\s?$/;

/** The remote span context a traceparent (and tracestate) describes, or undefined when malformed. */
export function parseTraceparent(traceparent: string, tracestate?: string): SpanContext | undefined {
  const m = TRACEPARENT.exec(traceparent);
  if (!m) return undefined;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  const spanContext: SpanContext = { traceId: traceId!, spanId: spanId!, traceFlags: parseInt(flags!, 16), isRemote: true };
  if (tracestate) spanContext.traceState = createTraceState(tracestate);
  return isSpanContextValid(spanContext) ? spanContext : undefined;
}

/** traceparent and tracestate of a context's span; {} when it has no valid span. */
export function formatTraceContext(ctx: Context): Record<string, string> {
  const spanContext = trace.getSpanContext(ctx);
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  // Only the sampled bit is defined in version 00.
  const flags = (spanContext.traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0');
  const headers: Record<string, string> = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}` };
  const state = spanContext.traceState?.serialize();
  if (state) headers.tracestate = state;
  return headers;
}

import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';

// One logger factory for processes (workers, CLI, infra). Activities use Temporal's activity
// logger instead, which adds workflow context (and, through Temporal's OpenTelemetry
// interceptor, the activity span's trace_id / span_id).
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, redact: ['databaseUrl', '*.password', 'password'], mixin: traceFields });
}

/** trace_id and span_id of the span active where a line is logged, so a log line leads to its trace. */
function traceFields(): Record<string, string> {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}
export type { Logger };

import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino from 'pino';

/**
 * What the library logs through: pino's shape, so a service passes its own pino logger (or any
 * logger with these methods: `info(obj, msg)` and `info(msg)`, and `child(bindings)`).
 */
export interface Logger {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

// One logger factory for processes (workers, CLI, infra) given no logger of their own. Activities
// use Temporal's activity logger instead, which adds workflow context (and, through Temporal's
// OpenTelemetry interceptor, the activity span's trace_id / span_id).
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({ name, level, redact: ['databaseUrl', '*.password', 'password'], mixin: traceFields });
}

/** trace_id and span_id of the span active where a line is logged, so a log line leads to its trace. */
function traceFields(): Record<string, string> {
  const spanContext = trace.getSpanContext(context.active());
  return spanContext && isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

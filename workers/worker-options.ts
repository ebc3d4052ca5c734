import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { NativeConnection } from '@temporalio/worker';
import type { Pool, PoolConfig } from 'pg';
import type { Registry } from 'prom-client';
import type { Logger } from '../src/config/logger';

/**
 * What a service may hand a worker instead of letting it build its own. Whatever is given stays
 * the service's: the worker never ends a given pool nor closes a given connection. Nothing is
 * installed process-wide unless asked (no signal handlers, no Temporal runtime, no metrics in
 * prom-client's global registry).
 */
export interface WorkerOptions {
  /** Stops the worker (it drains first) and makes the run return. */
  signal?: AbortSignal;
  /**
   * Your own pool. Unset: one of the worker's own, from database.workerUrls. The relay's sessions
   * and its LISTEN connection still open dedicated connections, with this pool's settings.
   */
  pool?: Pool;
  /** Your own connection to Temporal (NativeConnection.connect); unset: one of the worker's own. */
  connection?: NativeConnection;
  /** A pino logger, or anything with pino's info/warn/error/debug/child; unset: a pino logger of its own. */
  logger?: Logger;
  /**
   * The prom-client Registry the worker's metrics are added to (you serve it). Unset: the
   * library's own registry, served on metrics.portBase when that is set.
   */
  registry?: Registry;
  /** Your own OpenTelemetry span processor (else OTLP from tracing.otlpTracesUrl, else none): docs/observability.md. */
  spanProcessor?: SpanProcessor;
  /**
   * Install the Temporal SDK's runtime: its logs through this logger, its own metrics on
   * metrics.portBase + 10. Process-wide, and only possible before any Temporal connection exists,
   * so off unless asked; the bundled worker processes ask.
   */
  installTemporalRuntime?: boolean;
}

/** Runs `stop` once when `signal` aborts (at once if it has). */
export function onAbort(signal: AbortSignal | undefined, stop: () => void): void {
  if (!signal) return;
  if (signal.aborted) stop();
  else signal.addEventListener('abort', stop, { once: true });
}

/**
 * Where a pool connects, for dedicated connections (a relay session's, the LISTEN) to the same
 * database as the same user: without the pool's sizing and timeouts, as the worker's own
 * dedicated connections have none. pg keeps the password off the enumerable options.
 */
export function poolConnectionSettings(pool: Pool): PoolConfig {
  const settings: PoolConfig = { ...pool.options, password: pool.options.password };
  for (const key of ['max', 'min', 'idleTimeoutMillis', 'statement_timeout', 'lock_timeout', 'query_timeout'] as const) delete settings[key];
  return settings;
}

import { IllegalStateError } from '@temporalio/common';
import { makeTelemetryFilterString, Runtime, type RuntimeOptions } from '@temporalio/worker';
import type { Logger } from '../config/logger';
import { temporalLoggerFor } from './temporal-logger';

/**
 * Installs the Temporal SDK's process-wide runtime before any connection exists: its logs go
 * through our pino logger (JSON), and its own metrics (task latencies, slots, polls, sticky
 * cache ...) are served by the SDK's built-in Prometheus exporter on `sdkMetricsPort`.
 * A taken port leaves the SDK without metrics rather than the worker without work. In a test
 * process the runtime may already be installed; that one is kept.
 */
export function installTemporalRuntime(logger: Logger, opts: { host: string; sdkMetricsPort?: number }): void {
  const base: RuntimeOptions = {
    // The SDK would shut every worker down on SIGTERM itself, at the same moment as the worker's
    // own handler (workers/run-main.ts shutdownSignal). Only ours reacts, so it can stop
    // things in the order they need: the consumer leaves its group (in-flight chunks finish,
    // their credit workflows report back, offsets are committed) before its worker stops.
    shutdownSignals: [],
    logger: temporalLoggerFor(logger),
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN', other: 'ERROR' }) } },
  };
  const port = opts.sdkMetricsPort;
  try {
    if (port === undefined) {
      Runtime.install(base);
      return;
    }
    try {
      Runtime.install({ ...base, telemetryOptions: { ...base.telemetryOptions, metrics: { prometheus: { bindAddress: `${opts.host}:${port}` } } } });
      logger.info({ temporalSdkMetrics: `http://${opts.host}:${port}/metrics` }, 'Temporal SDK serving its Prometheus metrics');
    } catch (err) {
      if (err instanceof IllegalStateError) throw err;
      // The exporter could not bind (port taken): run without the SDK's metrics.
      logger.warn({ port, err: (err as Error).message }, 'Temporal SDK metrics not exported');
      Runtime.install(base);
    }
  } catch (err) {
    if (!(err instanceof IllegalStateError)) throw err;
    logger.debug('Temporal runtime already installed in this process; keeping it');
  }
}

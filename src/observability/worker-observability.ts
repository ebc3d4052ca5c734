import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import { startMetricsServer } from './metrics-server';
import { installTemporalRuntime } from './temporal-runtime';
import { startTracing, type WorkerTracing } from './tracing';
import { metricsPorts, type WorkerKind } from './worker-ports';

/**
 * What every worker process sets up first, before any Temporal connection: the SDK runtime
 * (JSON logs through pino, its own metrics endpoint), our /metrics endpoint and tracing
 * (src/observability/tracing.ts). With METRICS_PORT_BASE=0 the metrics endpoints are off.
 */
export async function startWorkerObservability(
  config: Config,
  worker: WorkerKind,
  logger: Logger,
  opts: { spanProcessor?: SpanProcessor } = {},
): Promise<{ tracing: WorkerTracing; close(): Promise<void> }> {
  const ports = metricsPorts(config, worker);
  installTemporalRuntime(logger, { host: config.metrics.host, sdkMetricsPort: ports?.temporalSdk });
  const server = ports ? await startMetricsServer(logger, config.metrics.host, ports.app, { worker }) : undefined;
  const tracing = startTracing(config, worker, logger, opts.spanProcessor);
  return {
    tracing,
    close: async () => {
      await server?.close();
      await tracing.close();
    },
  };
}

import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Registry } from 'prom-client';
import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import { startMetricsServer } from './metrics-server';
import { exposeMetricsIn } from './registry';
import { installTemporalRuntime } from './temporal-runtime';
import { startTracing, type WorkerTracing } from './tracing';
import { metricsPorts, type WorkerKind } from './worker-ports';

/**
 * What every worker sets up first, before any Temporal connection: the notices about deprecated
 * settings, its metrics (added to the service's registry when given, else served from the
 * library's own on metrics.portBase), tracing (src/observability/tracing.ts) and, when asked, the
 * SDK runtime (JSON logs through the logger, its own metrics endpoint). `sampling`: whether the
 * gauges read from PostgreSQL and Kafka are worth refreshing (someone reads the metrics).
 */
export async function startWorkerObservability(
  config: Config,
  worker: WorkerKind,
  logger: Logger,
  opts: { spanProcessor?: SpanProcessor; registry?: Registry; installTemporalRuntime?: boolean } = {},
): Promise<{ tracing: WorkerTracing; sampling: boolean; close(): Promise<void> }> {
  for (const notice of config.notices) logger.warn(notice);
  const ports = metricsPorts(config, worker);
  if (opts.installTemporalRuntime) installTemporalRuntime(logger, { host: config.metrics.host, sdkMetricsPort: ports?.temporalSdk });
  if (opts.registry) exposeMetricsIn(opts.registry);
  const server = ports && !opts.registry ? await startMetricsServer(logger, config.metrics.host, ports.app, { worker }) : undefined;
  const tracing = startTracing(config, worker, logger, opts.spanProcessor);
  return {
    tracing,
    sampling: opts.registry !== undefined || ports !== undefined,
    close: async () => {
      await server?.close();
      await tracing.close();
    },
  };
}

import type { Config } from '../config/env';
import type { Logger } from '../config/logger';
import { startMetricsServer } from './metrics-server';
import { installTemporalRuntime } from './temporal-runtime';
import { metricsPorts, type WorkerKind } from './worker-ports';

/**
 * What every worker process sets up first, before any Temporal connection: the SDK runtime
 * (JSON logs through pino, its own metrics endpoint) and our /metrics endpoint. With
 * METRICS_PORT_BASE=0 only the logging part remains.
 */
export async function startWorkerObservability(config: Config, worker: WorkerKind, logger: Logger): Promise<{ close(): Promise<void> }> {
  const ports = metricsPorts(config, worker);
  installTemporalRuntime(logger, { host: config.metrics.host, sdkMetricsPort: ports?.temporalSdk });
  const server = ports ? await startMetricsServer(logger, config.metrics.host, ports.app, { worker }) : undefined;
  return { close: async () => void (await server?.close()) };
}

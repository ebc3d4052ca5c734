import type { Config } from '../config/env';

export type WorkerKind = 'relay' | 'consumer' | 'retention';

const OFFSET: Record<WorkerKind, number> = { relay: 0, consumer: 1, retention: 2 };
/** The Temporal SDK's own endpoint of each worker sits this far above ours. */
const SDK_OFFSET = 10;

/** Ports of one worker's two metrics endpoints, or undefined when metrics are off (METRICS_PORT_BASE=0). */
export function metricsPorts(config: Config, worker: WorkerKind): { app: number; temporalSdk: number } | undefined {
  const base = config.metrics.portBase;
  if (base === undefined) return undefined;
  return { app: base + OFFSET[worker], temporalSdk: base + SDK_OFFSET + OFFSET[worker] };
}

export const WORKER_KINDS: readonly WorkerKind[] = ['relay', 'consumer', 'retention'];

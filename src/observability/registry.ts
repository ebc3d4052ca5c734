import { Registry } from 'prom-client';

/**
 * The library's own registry: every metric of ours is registered here, never in prom-client's
 * global default registry, so a service's own metrics (and its /metrics endpoint) are left alone.
 * The bundled workers serve it; a service passes its own Registry and the metrics are added there.
 */
export const OUTBOX_REGISTRY = new Registry();

/** Adds every metric of ours to `registry` (each once; a second worker in the process adds nothing). */
export function exposeMetricsIn(registry: Registry): void {
  if (registry === OUTBOX_REGISTRY) return;
  for (const { name } of OUTBOX_REGISTRY.getMetricsAsArray()) {
    const metric = OUTBOX_REGISTRY.getSingleMetric(name);
    if (metric && registry.getSingleMetric(name) === undefined) registry.registerMetric(metric);
  }
}

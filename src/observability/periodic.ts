import type { Logger } from '../config/logger';
import { Counter } from 'prom-client';
import { OUTBOX_REGISTRY } from './registry';

const sampleErrors = new Counter({
  registers: [OUTBOX_REGISTRY],
  name: 'metrics_sample_errors_total',
  help: 'Failed refreshes of gauges read from PostgreSQL or Kafka (their values are then stale)',
  labelNames: ['sampler'] as const,
});

/**
 * Runs `sample` now and then every `everyMs`, never two at once, never keeping the process
 * alive. A failure is logged (at most once a minute per sampler) and counted; the gauges keep
 * their last values and the next round tries again.
 */
export function every(name: string, everyMs: number, logger: Logger, sample: () => Promise<void>): { stop(): void } {
  let running = false;
  let lastLoggedAt = 0;
  const tick = () => {
    if (running) return;
    running = true;
    sample()
      .catch((err: Error) => {
        sampleErrors.inc({ sampler: name });
        if (Date.now() - lastLoggedAt > 60_000) {
          lastLoggedAt = Date.now();
          logger.warn({ sampler: name, err: err.message }, 'refreshing metrics failed; gauges keep their last values');
        }
      })
      .finally(() => (running = false));
  };
  tick();
  const timer = setInterval(tick, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

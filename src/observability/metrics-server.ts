import http from 'node:http';
import { collectDefaultMetrics } from 'prom-client';
import type { Logger } from '../config/logger';
import { OUTBOX_REGISTRY } from './registry';

let defaultsCollected = false;

/**
 * Serves the library's own registry (src/observability/registry.ts) with the process's metrics at
 * http://host:port/metrics: what a bundled worker process runs. Scrapes only read values already
 * in memory (gauges that need a query are refreshed on their own timer), so a scrape storm
 * costs no database or Kafka round trip. A port already taken (a second worker of the same
 * kind on this host) costs this process its endpoint, never its work: it logs and goes on.
 */
export async function startMetricsServer(logger: Logger, host: string, port: number, labels: Record<string, string>): Promise<{ close(): Promise<void> } | undefined> {
  if (!defaultsCollected) {
    // Process memory, CPU, event-loop lag: the BRIEF's memory budget, watched.
    collectDefaultMetrics({ register: OUTBOX_REGISTRY });
    OUTBOX_REGISTRY.setDefaultLabels(labels);
    defaultsCollected = true;
  }
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url !== '/metrics' && !req.url?.startsWith('/metrics?'))) {
      res.writeHead(404).end('see /metrics\n');
      return;
    }
    OUTBOX_REGISTRY.metrics().then(
      (text) => res.writeHead(200, { 'content-type': OUTBOX_REGISTRY.contentType }).end(text),
      (err: Error) => res.writeHead(500).end(`${err.message}\n`),
    );
  });
  const listening = await new Promise<boolean>((resolve) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      logger.warn({ port, host, err: err.code ?? err.message }, 'metrics endpoint not started: the port is taken (another worker of this kind on this host?); this process serves no metrics');
      resolve(false);
    });
    server.listen(port, host, () => resolve(true));
  });
  if (!listening) return undefined;
  server.unref();
  logger.info({ metrics: `http://${host}:${port}/metrics` }, 'serving Prometheus metrics');
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

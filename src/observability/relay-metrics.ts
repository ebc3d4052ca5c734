import { Counter, Gauge, Histogram } from 'prom-client';
import { OUTBOX_REGISTRY } from './registry';

// What the relay worker exports (docs/observability.md lists every series with its meaning).
// Counters and the latency histogram are fed by the publish activity as it works; the gauges
// by the backlog sampler, every METRICS_SAMPLE_MS, never by a scrape.

export const outboxPublished = new Counter({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_published_events_total',
  help: 'Outbox events acknowledged by Kafka (acks=all) by this relay worker; rate() gives throughput. A re-published row (crash gap, operator reset) counts again.',
  labelNames: ['event_type'] as const,
});

export const outboxPublishLatency = new Histogram({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_publish_latency_seconds',
  help: "From the outbox row's created_at (its commit, on the database clock) to Kafka's acknowledgement",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
});

export const outboxParkedTotal = new Counter({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_parked_total',
  help: 'Outbox rows this relay worker parked (dead-lettered) because they can never be published',
  labelNames: ['reason'] as const,
});

export const outboxPending = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_pending_events',
  help: 'Outbox rows waiting to be published (counted up to 1,000,000: a larger backlog shows as 1e6)',
});

export const outboxOldestPendingAge = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_oldest_pending_age_seconds',
  help: 'Age of the oldest pending outbox row (0 when none waits)',
});

export const vacuumHorizonAge = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_db_vacuum_horizon_age_seconds',
  help: "How long the oldest session or prepared transaction has held the outbox database's vacuum horizon (0 when none); `npx temporal-outbox doctor` names it (docs/vacuum.md)",
});

export const outboxParked = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'outbox_parked_events',
  help: 'Outbox rows parked now (dead-lettered, never published; `relay parked` lists them)',
});

/** Counts rows Kafka just acknowledged and observes each one's commit → ack latency. */
export function recordPublished(rows: readonly { eventType: string; /** ISO 8601 */ createdAt: string }[], ackedAt = Date.now()): void {
  const perType = new Map<string, number>();
  for (const row of rows) {
    perType.set(row.eventType, (perType.get(row.eventType) ?? 0) + 1);
    outboxPublishLatency.observe(Math.max(0, ackedAt - Date.parse(row.createdAt)) / 1000);
  }
  for (const [eventType, n] of perType) outboxPublished.inc({ event_type: eventType }, n);
}

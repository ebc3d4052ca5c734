import { Counter, Gauge, Histogram } from 'prom-client';
import { OUTBOX_REGISTRY } from './registry';

// What the consumer worker exports (docs/observability.md). `handler` is the inbox identity
// (INBOX_CONSUMER), the name a handler's inbox rows carry.

export const inboxApplied = new Counter({
  registers: [OUTBOX_REGISTRY],
  name: 'inbox_events_applied_total',
  help: 'Events whose effect a handler applied (inbox row and effect committed together)',
  labelNames: ['handler', 'event_type'] as const,
});

export const inboxDuplicates = new Counter({
  registers: [OUTBOX_REGISTRY],
  name: 'inbox_duplicates_absorbed_total',
  help: 'Redelivered events the inbox recognised and skipped (already applied, or repeated within one batch)',
  labelNames: ['handler'] as const,
});

export const inboxParkedTotal = new Counter({
  registers: [OUTBOX_REGISTRY],
  name: 'inbox_parked_total',
  help: 'Events a consumer parked instead of applying, by stage: "validation" (malformed, missing fields), "unknown_type" (no handler, with CONSUMER_UNKNOWN_EVENT_TYPES=park), "rejected" (the handler refused it, e.g. a row it refers to is missing), "conflict" (same event id, different payload)',
  labelNames: ['handler', 'stage'] as const,
});

export const inboxHandlerDuration = new Histogram({
  registers: [OUTBOX_REGISTRY],
  name: 'inbox_handler_duration_seconds',
  help: 'Time one handler call took (one batch: inbox insert and effect in one transaction)',
  labelNames: ['handler'] as const,
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

export const inboxHandlerBatchEvents = new Histogram({
  registers: [OUTBOX_REGISTRY],
  name: 'inbox_handler_batch_events',
  help: 'Events per handler call',
  labelNames: ['handler'] as const,
  buckets: [1, 10, 100, 500, 1000, 2000, 5000],
});

export const consumerLag = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'inbox_consumer_lag_messages',
  help: "Messages behind the partition's end, as this consumer saw it at its last fetch of the partition (after the batch is credited: 0 when caught up)",
  labelNames: ['topic', 'partition'] as const,
});

export const inboxParked = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'inbox_parked_events',
  help: 'Events parked in inbox_parked_events for this handler now (counted up to 1,000,000)',
  labelNames: ['handler'] as const,
});

/** One handler call's outcome: applied per event type, absorbed repeats, newly parked refusals and conflicts, its duration. */
export function recordHandlerCall(handler: string, events: number, result: { appliedByType: Record<string, number>; duplicates: number; rejected: number; conflicts: number }, ms: number): void {
  for (const [eventType, applied] of Object.entries(result.appliedByType)) inboxApplied.inc({ handler, event_type: eventType }, applied);
  inboxDuplicates.inc({ handler }, result.duplicates);
  // Newly parked only: a retried or redelivered batch meets the same refusal again. A refusal is
  // whatever the handler said no to (a missing row it refers to, a taken key for a
  // shipment), so the stage names the outcome, not one handler's reason (that is in the row).
  if (result.rejected) inboxParkedTotal.inc({ handler, stage: 'rejected' }, result.rejected);
  if (result.conflicts) inboxParkedTotal.inc({ handler, stage: 'conflict' }, result.conflicts);
  inboxHandlerDuration.observe({ handler }, ms / 1000);
  inboxHandlerBatchEvents.observe({ handler }, events);
}

import { Gauge } from 'prom-client';
import { OUTBOX_REGISTRY } from './registry';

// The consumer group as Kafka sees it, exported by the relay worker: a consumer that is not
// running cannot report its own absence. docs/observability.md has the alert rules built on these.

export const groupMembers = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'consumer_group_members',
  help: 'Members of the consumer group (0: nobody consumes; with a backlog, credits have stopped)',
  labelNames: ['group', 'topic'] as const,
});

export const groupLag = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'consumer_group_lag_messages',
  help: "Messages on the partition after the group's committed offset",
  labelNames: ['group', 'topic', 'partition'] as const,
});

export const groupOldestWaitingAge = new Gauge({
  registers: [OUTBOX_REGISTRY],
  name: 'consumer_group_oldest_waiting_age_seconds',
  help: 'Age of the oldest message the group has not consumed on the partition (0 when caught up); grows without bound when lag keeps growing',
  labelNames: ['group', 'topic', 'partition'] as const,
});

import type { Kafka } from 'kafkajs';
import { adminConnection } from '../kafka-admin-connection';
import { keptConnectionProbe } from '../kept-connection-probe';

/**
 * How many members the consumer group has, asked through an admin client of its own, kept while
 * it answers. Each call is bounded by `timeoutMs` (describeGroups has no bound of its own beyond
 * kafkajs' request timeout and retries, far past the step-aside's); a client that did not answer
 * in time, or failed, is discarded and the next call opens a new one, so a heal that left its
 * connections dead costs one call, not every later one. `close` lets go of the kept client.
 */
export function groupMembers(kafka: Kafka, group: string, timeoutMs: number): (() => Promise<number>) & { close(): Promise<void> } {
  return keptConnectionProbe(
    adminConnection(kafka, async (admin) => (await admin.describeGroups([group])).groups.find((g) => g.groupId === group)?.members.length ?? 0),
    timeoutMs,
  );
}

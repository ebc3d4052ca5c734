import type { ConsumerProcess } from './consumer-harness';

// What a consumer worker's own log says about its group membership and its work, read the same
// way by every test that watches real consumer processes.

/** The partitions of `topic` that `p`'s latest group join gave it. */
export function assignedPartitions(p: ConsumerProcess, topic: string): number[] {
  const joins = p.logs.filter((l) => l.msg === 'joined consumer group');
  const last = joins[joins.length - 1]?.assignment as Record<string, number[]> | undefined;
  return last?.[topic] ?? [];
}

/** Whether `p` applied at least one credit at or after `since` (epoch ms). */
export function creditedAfter(p: ConsumerProcess, since: number): boolean {
  return p.logs.some((l) => l.msg === 'batch applied' && (l.time as number) >= since && (l.applied as number) > 0);
}

/** Whether `p` joined its group at or after `since` (epoch ms). */
export function joinedAfter(p: ConsumerProcess, since: number): boolean {
  return p.logs.some((l) => l.msg === 'joined consumer group' && (l.time as number) >= since);
}

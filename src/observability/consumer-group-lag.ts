import type { Admin } from 'kafkajs';

// How far a consumer group is behind one topic, read from Kafka alone (no consumer of ours has
// to run): per partition the messages waiting and the age of the oldest one, plus the group's
// members. The doctor and the relay worker's metrics share it.

export interface PartitionLag {
  partition: number;
  /** Next offset the group will read (its committed offset, or the log start when it has none). */
  committed: number;
  /** The partition's end offset (high watermark). */
  end: number;
  lag: number;
  /** Age of the first message the group has not consumed yet; null when nothing waits. */
  oldestWaitingAgeMs: number | null;
}

export interface GroupLag {
  group: string;
  topic: string;
  /** Kafka's group state: Stable, PreparingRebalance, Empty, Dead (no such group) ... */
  state: string;
  members: number;
  partitions: PartitionLag[];
  totalLag: number;
  oldestWaitingAgeMs: number | null;
}

export async function measureGroupLag(admin: Admin, topic: string, group: string): Promise<GroupLag> {
  const now = Date.now();
  const [ends, [committed], described] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId: group, topics: [topic] }),
    admin.describeGroups([group]),
  ]);
  const at = new Map(committed?.partitions.map((p) => [p.partition, Number(p.offset)]));
  const base = ends
    .map((e) => {
      const low = Number(e.low);
      const end = Number(e.high);
      const offset = at.get(e.partition);
      // -1: the group never committed here; it starts at the log start (fromBeginning).
      const next = offset === undefined || offset < 0 ? low : Math.max(offset, low);
      return { partition: e.partition, committed: next, end, lag: Math.max(0, end - next) };
    })
    .sort((a, b) => a.partition - b.partition);
  const partitions: PartitionLag[] = await Promise.all(
    base.map(async (p) => ({ ...p, oldestWaitingAgeMs: p.lag > 0 ? now - (await timestampAtOffset(admin, topic, p.partition, p.committed, now)) : null })),
  );
  const group0 = described.groups[0];
  const ages = partitions.map((p) => p.oldestWaitingAgeMs).filter((a): a is number => a !== null);
  return {
    group,
    topic,
    state: group0?.state ?? 'Dead',
    members: group0?.members.length ?? 0,
    partitions,
    totalLag: partitions.reduce((n, p) => n + p.lag, 0),
    oldestWaitingAgeMs: ages.length ? Math.max(...ages) : null,
  };
}

/**
 * The timestamp of the message at `offset`, found without reading it: Kafka answers "the first
 * offset at or after time t" (ListOffsets), so step back from now in doubling intervals until
 * that offset reaches ours, then halve the interval down to 1 s or 2% of the age. About 2·log2
 * of the age in seconds requests, only for partitions where something waits.
 * Producer timestamps are close to monotonic per partition (one relay shard sends one key).
 */
async function timestampAtOffset(admin: Admin, topic: string, partition: number, offset: number, now: number): Promise<number> {
  const firstOffsetAt = async (ts: number) => {
    const offsets = await admin.fetchTopicOffsetsByTimestamp(topic, ts);
    return Number(offsets.find((o) => o.partition === partition)?.offset ?? Number.MAX_SAFE_INTEGER);
  };
  // reachesOffset(ts): some message at or before `offset` is stamped ts or later, i.e. ts <= its time.
  const reachesOffset = async (ts: number) => (await firstOffsetAt(ts)) <= offset;
  let newer = now; // known: reachesOffset(newer) is false (or ts is now)
  let older = now - 1000;
  for (let step = 1000; !(await reachesOffset(older)); step *= 2) {
    newer = older;
    older = now - step * 2;
    if (step > 400 * 24 * 3600_000) return older; // older than any sane retention: say so roughly
  }
  // Invariant: reachesOffset(older) true, reachesOffset(newer) false (or newer = now).
  while (newer - older > Math.max(1000, (now - newer) * 0.02)) {
    const mid = Math.floor((older + newer) / 2);
    if (await reachesOffset(mid)) older = mid;
    else newer = mid;
  }
  return older;
}

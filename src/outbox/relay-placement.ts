// Which relay worker runs which shard: a pure function of the shard count and the set of live
// workers, so every worker and every shard workflow that reads the same live set computes the
// same placement, with no coordinator and no table of assignments to keep consistent.

export interface LiveRelayWorker {
  workerId: string;
  /** The worker's own task queue: a shard's relay session assigned to it is scheduled there. */
  taskQueue: string;
  /** Since when its links have answered every health check (ms since the epoch, the database's clock); absent while one fails. */
  linksOkSince?: number;
}

/**
 * Rendezvous (highest-random-weight) hashing with bounded loads. Each shard ranks the workers by
 * a hash of (shard, worker) and takes the best-ranked one that still has room: every worker may
 * hold ⌊S/N⌋ shards, and S mod N of them (whichever get there first) one more. Plain rendezvous
 * hashing moves few shards when a worker comes or goes but can be lopsided (8 shards on 2
 * workers: one of them holds 6 or more in 29 % of worker pairs); with the room rule every worker
 * holds ⌊S/N⌋ or ⌈S/N⌉, and shards still mostly keep their worker when the set changes because
 * each one keeps its own ranking.
 */
export function placeShards(shardCount: number, workers: readonly LiveRelayWorker[]): (LiveRelayWorker | undefined)[] {
  const sorted = [...new Map(workers.map((w) => [w.workerId, w])).values()].sort((a, b) => (a.workerId < b.workerId ? -1 : a.workerId > b.workerId ? 1 : 0));
  if (sorted.length === 0) return Array.from({ length: shardCount }, () => undefined);
  const floor = Math.floor(shardCount / sorted.length);
  const extra = shardCount % sorted.length;
  const load = new Map<string, number>();
  let holdingExtra = 0;
  // Total room is exactly shardCount, so every shard finds a worker with room.
  const hasRoom = (w: LiveRelayWorker) => {
    const l = load.get(w.workerId) ?? 0;
    return l < floor || (l === floor && holdingExtra < extra);
  };
  const placement: LiveRelayWorker[] = [];
  for (let shard = 0; shard < shardCount; shard++) {
    const ranked = sorted
      .map((w) => ({ w, weight: rendezvousWeight(shard, w.workerId) }))
      .sort((a, b) => b.weight - a.weight || (a.w.workerId < b.w.workerId ? -1 : 1));
    const chosen = ranked.find(({ w }) => hasRoom(w))!.w;
    const l = (load.get(chosen.workerId) ?? 0) + 1;
    if (l === floor + 1) holdingExtra += 1;
    load.set(chosen.workerId, l);
    placement.push(chosen);
  }
  return placement;
}

/** The worker a shard belongs to, or undefined when no worker is live. */
export function placeShard(shardIndex: number, shardCount: number, workers: readonly LiveRelayWorker[]): LiveRelayWorker | undefined {
  return placeShards(shardCount, workers)[shardIndex];
}

/** 32-bit FNV-1a of "shard/worker", then a murmur3 finaliser so close inputs spread. */
function rendezvousWeight(shard: number, workerId: string): number {
  const text = `${shard}/${workerId}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

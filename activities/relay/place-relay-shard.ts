import { readLiveRelayWorkers } from '../../src/outbox/queries/live-relay-workers';
import { stillAvoided } from '../../src/outbox/relay-avoidance';
import { placeShard } from '../../src/outbox/relay-placement';
import type { RelayActivityDeps } from './deps';
import type { PlaceRelayShardInput, PlaceRelayShardOutput } from './types';
import type { RelayWorkerRegistry } from './worker-registry';

/**
 * Where the shard's next session runs: the placement over the live relay workers, read fresh
 * (one indexed query). Workers the shard is avoiding are left out unless nobody else is live, or
 * they are healthy again (src/outbox/relay-avoidance.ts).
 */
export function createPlaceRelayShard({ pool, registry }: Pick<RelayActivityDeps, 'pool'> & { registry: RelayWorkerRegistry }) {
  return async function placeRelayShard(input: PlaceRelayShardInput): Promise<PlaceRelayShardOutput> {
    // A worker that cannot renew its lease most likely cannot read the live set either: failing at
    // once sends the retry to another worker instead of waiting out the start-to-close timeout.
    if (!registry.vouches()) throw new Error('this relay worker cannot renew its lease: placement left to another worker');
    const { workers: live, readAt } = await readLiveRelayWorkers(pool, registry.relayQueue);
    const avoided = stillAvoided(input, live);
    const trusted = live.filter((w) => !avoided.has(w.workerId));
    const candidates = trusted.length > 0 ? trusted : live;
    const worker = placeShard(input.shardIndex, input.shardCount, candidates);
    return { workerId: worker?.workerId, taskQueue: worker?.taskQueue, liveWorkers: live.length, readAt };
  };
}

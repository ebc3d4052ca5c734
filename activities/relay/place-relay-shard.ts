import { liveRelayWorkers } from '../../src/outbox/queries/live-relay-workers';
import { placeShard } from '../../src/outbox/relay-placement';
import type { RelayActivityDeps } from './deps';
import type { PlaceRelayShardInput, PlaceRelayShardOutput } from './types';
import type { RelayWorkerRegistry } from './worker-registry';

/**
 * Where the shard's next session runs: the placement over the live relay workers, read fresh
 * (one indexed query). Workers the shard is avoiding are left out unless nobody else is live.
 */
export function createPlaceRelayShard({ pool, registry }: Pick<RelayActivityDeps, 'pool'> & { registry: RelayWorkerRegistry }) {
  return async function placeRelayShard(input: PlaceRelayShardInput): Promise<PlaceRelayShardOutput> {
    const live = await liveRelayWorkers(pool, registry.relayQueue);
    const trusted = live.filter((w) => !(input.avoid ?? []).includes(w.workerId));
    const candidates = trusted.length > 0 ? trusted : live;
    const worker = placeShard(input.shardIndex, input.shardCount, candidates);
    return { workerId: worker?.workerId, taskQueue: worker?.taskQueue, liveWorkers: live.length };
  };
}

import { BytesInFlight } from './bytes-in-flight';
import type { RelayActivityDeps } from './deps';
import { createFetchPendingBatch } from './fetch-pending-batch';
import { createMarkPublished } from './mark-published';
import { PendingScanBounds } from './pending-scan-bound';
import { createPlaceRelayShard } from './place-relay-shard';
import { createPublishBatch } from './publish-batch';
import { createRedriveParked } from './redrive-parked';
import { createRelaySession } from './relay-session';
import { createSharedRoundTrips } from './shared-round-trips';
import { createWaitForPendingEvents } from './wait-for-pending-events';
import type { RelayWorkerRegistry } from './worker-registry';
import type { SessionConnections } from './session-connections';

export type { RelayActivityDeps } from './deps';
export { PendingListener } from './pending-listener';
export { PendingScanBounds } from './pending-scan-bound';
export { RelayWorkerRegistry } from './worker-registry';
export { SessionConnections } from './session-connections';

/**
 * The relay's activities, bound to one worker's pool, producer, LISTEN connection, session
 * connections and place among the relay workers. `wrap` (instrumentation, a test fixture's fault
 * injection) wraps the set the worker registers, and the relay session calls publish and mark
 * through the wrapped set too.
 */
export function createRelayActivities(
  given: RelayActivityDeps & { registry: RelayWorkerRegistry; sessionConnections: SessionConnections },
  bounds = new PendingScanBounds(given.config.relay.fullScanIntervalMs),
  wrap: (activities: RelayActivities) => RelayActivities = (a) => a,
): RelayActivities {
  // Two batches' worth: what a worker running the earlier default of 2 shards could hold, now
  // shared by however many shards it runs.
  const deps = {
    ...given,
    bytesInFlight: given.bytesInFlight ?? new BytesInFlight(2 * given.config.relay.batchMaxBytes),
    roundTrips: given.roundTrips ?? createSharedRoundTrips(given.pool, given.producer, given.config),
  };
  // Per process and per shard: a bound is only ever safe, so a shard that moves to another worker
  // starts there from that worker's own (older, or no) bound. (A benchmark passes its own
  // `bounds` to read them.)
  deps.listener.onRescan(() => bounds.requestFullScan());
  const activities: RelayActivities = {
    fetchPendingBatch: createFetchPendingBatch(deps, bounds),
    publishBatch: createPublishBatch(deps),
    markPublished: createMarkPublished(deps),
    waitForPendingEvents: createWaitForPendingEvents(deps, bounds),
    redriveParked: createRedriveParked(deps),
    placeRelayShard: createPlaceRelayShard(deps),
    relayShardSession: createRelaySession(deps, bounds, () => wrapped),
  };
  const wrapped = wrap(activities);
  return wrapped;
}

export interface RelayActivities {
  fetchPendingBatch: ReturnType<typeof createFetchPendingBatch>;
  publishBatch: ReturnType<typeof createPublishBatch>;
  markPublished: ReturnType<typeof createMarkPublished>;
  waitForPendingEvents: ReturnType<typeof createWaitForPendingEvents>;
  redriveParked: ReturnType<typeof createRedriveParked>;
  placeRelayShard: ReturnType<typeof createPlaceRelayShard>;
  relayShardSession: ReturnType<typeof createRelaySession>;
}

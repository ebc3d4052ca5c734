import type { RelayActivityDeps } from './deps';
import { createFetchPendingBatch } from './fetch-pending-batch';
import { createMarkPublished } from './mark-published';
import { createPublishBatch } from './publish-batch';
import { createWaitForPendingEvents } from './wait-for-pending-events';

export type { RelayActivityDeps } from './deps';
export { PendingListener } from './pending-listener';

/** The relay's activities, bound to one worker's pool, producer and LISTEN connection. */
export function createRelayActivities(deps: RelayActivityDeps) {
  return {
    fetchPendingBatch: createFetchPendingBatch(deps),
    publishBatch: createPublishBatch(deps),
    markPublished: createMarkPublished(deps),
    waitForPendingEvents: createWaitForPendingEvents(deps),
  };
}

export type RelayActivities = ReturnType<typeof createRelayActivities>;

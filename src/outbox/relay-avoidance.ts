import type { LiveRelayWorker } from './relay-placement';

/**
 * Workers a shard stopped trusting (a session there timed out or failed: workflows/relay/placement.ts),
 * as the workflow passes them to its placement and sessions. `avoidSince`: for each, when the
 * session that failed there was placed (the database's clock, read by that placement).
 */
export interface Avoidance {
  avoid?: readonly string[];
  avoidSince?: Readonly<Record<string, number>>;
}

/**
 * The workers of `live` the shard still leaves out: each avoided one, unless its links have
 * answered every health check since a time after its failed session was placed. Such a worker
 * was cut off for a while and is demonstrably healthy again (a fault shorter than its step-aside);
 * one whose link is still dead reports none (links_ok_since NULL), and one that never reported a
 * failure (hung, frozen) keeps an older time: both stay left out for the workflow's whole avoidance.
 */
export function stillAvoided(avoidance: Avoidance, live: readonly LiveRelayWorker[]): Set<string> {
  const avoided = new Set(avoidance.avoid ?? []);
  for (const worker of live) {
    const placedAt = avoidance.avoidSince?.[worker.workerId];
    if (avoided.has(worker.workerId) && placedAt !== undefined && worker.linksOkSince !== undefined && worker.linksOkSince > placedAt) avoided.delete(worker.workerId);
  }
  return avoided;
}

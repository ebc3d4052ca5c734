import { patched, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../../activities/relay';
import type { PlaceRelayShardOutput } from '../../activities/relay/types';
import type { RelayShardInput } from './contract';

// Where the shard's next session runs: one indexed read of the live relay workers, in whichever
// worker runs this workflow task. Retried forever: PostgreSQL down must not end the relay.
const { placeRelayShard } = proxyLocalActivities<RelayActivities>({
  startToCloseTimeout: '10 seconds',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

// Placement as an activity of the shared relay task queue: any relay worker polling it runs it,
// and a worker that cannot reach PostgreSQL has stepped aside and stops polling
// (workers/relay.worker.ts), so one sick worker no longer holds every shard's placement. As a
// local activity it ran on whichever worker ran the workflow task, retried there for ever: kept
// only for histories recorded before the patch.
const PLACE_ON_ANY_WORKER = 'relay-placement-on-any-worker';
const { placeRelayShard: placeOnAnyWorker } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '10 seconds' },
});

// A worker whose session timed out is left out of this shard's placement for this long (its row
// in outbox_relay_workers expires within 10 s if it is dead), or until it reports its links
// healthy since after that session was placed (src/outbox/relay-avoidance.ts): a worker cut off
// for less than its step-aside takes, then healed, gets its shards back at once rather than after
// this, and one whose link is still dead (or that hung without noticing) stays left out for all of it.
const AVOID_TIMED_OUT_WORKER_MS = 60_000;

/** Places a shard's sessions on the live relay workers, leaving out those it stopped trusting. */
export class ShardPlacement {
  private readonly avoidUntil = new Map<string, number>();
  // When each worker was last chosen, by the database's clock (the placement's read), and, for
  // the avoided ones, when their failed session was placed.
  private readonly placedAt = new Map<string, number>();
  private readonly avoidSince = new Map<string, number>();

  constructor(private readonly input: RelayShardInput) {}

  /** The worker for the next session (none when no relay worker is live), and the workers left out. */
  async place(): Promise<{ place: PlaceRelayShardOutput; avoid: string[]; avoidSince: Record<string, number> }> {
    const { avoid, avoidSince } = this.avoidance();
    const input = { shardIndex: this.input.shardIndex, shardCount: this.input.shardCount, avoid, avoidSince };
    const place = patched(PLACE_ON_ANY_WORKER) ? await placeOnAnyWorker(input) : await placeRelayShard(input);
    if (place.workerId !== undefined && place.readAt !== undefined) this.placedAt.set(place.workerId, place.readAt);
    return { place, avoid, avoidSince };
  }

  /** The workers left out now, and when each one's failed session was placed (where known). */
  avoidance(): { avoid: string[]; avoidSince: Record<string, number> } {
    const avoid = this.avoiding();
    return { avoid, avoidSince: Object.fromEntries(avoid.filter((w) => this.avoidSince.has(w)).map((w) => [w, this.avoidSince.get(w)!])) };
  }

  /** The workers left out now (their session timed out lately). */
  avoiding(): string[] {
    const now = Date.now();
    return [...this.avoidUntil].filter(([, until]) => until > now).map(([workerId]) => workerId);
  }

  /** A session on `workerId` timed out: the worker may be dead or hung; place elsewhere for a while. */
  avoid(workerId: string): void {
    this.avoidUntil.set(workerId, Date.now() + AVOID_TIMED_OUT_WORKER_MS);
    const placedAt = this.placedAt.get(workerId);
    if (placedAt === undefined) this.avoidSince.delete(workerId);
    else this.avoidSince.set(workerId, placedAt);
  }
}

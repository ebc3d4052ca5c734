import { Context } from '@temporalio/activity';
import type { RelayActivityDeps } from './deps';
import type { PendingScanBounds } from './pending-scan-bound';
import { pollPendingIds } from './poll-pending-ids';
import type { WaitForPendingEventsInput, WaitForPendingEventsOutput } from './types';

/**
 * The idle relay's wait: returns as soon as its shard has pending rows, or after timeoutMs.
 * LISTEN is active and the listener's position taken before each check, so a commit is seen
 * either by the check or by its notification (even one that arrives while the check runs),
 * never by neither. Only notifications that may concern this shard wake it (pending-notification.ts);
 * one that cannot say which shards it is for costs an indexed probe, not a workflow round trip.
 */
export function createWaitForPendingEvents({ pool, config, listener }: RelayActivityDeps, bounds: PendingScanBounds) {
  return async function waitForPendingEvents(input: WaitForPendingEventsInput): Promise<WaitForPendingEventsOutput> {
    const ctx = Context.current();
    const started = Date.now();
    const deadline = started + input.timeoutMs;
    // The same bounded poll as the fetch, sharing its bound: a probe that read from the beginning
    // would pay for every dead entry, and one that saw rows the fetch cannot would spin the loop.
    const bound = bounds.forShard(input.shardCount, input.shardIndex);
    const shardHasWork = async () =>
      (await pollPendingIds(pool, bound, { shardCount: input.shardCount, shardIndex: input.shardIndex, limit: 1 })).length > 0;

    await listener.ensureListening();
    while (!ctx.cancellationSignal.aborted) {
      const seen = listener.position();
      if (await shardHasWork()) return { outcome: 'pending', waitedMs: Date.now() - started };
      const remaining = deadline - Date.now();
      if (remaining <= 0) break;
      // Wakes on NOTIFY; otherwise re-checks every fallbackPollMs in case a notification was
      // lost (listener reconnecting, or rows made pending again by an UPDATE).
      await listener.wait(Math.min(remaining, config.relay.fallbackPollMs), ctx.cancellationSignal, seen, { shardIndex: input.shardIndex, shardCount: input.shardCount });
      ctx.heartbeat();
      await listener.ensureListening();
    }
    return { outcome: 'timeout', waitedMs: Date.now() - started };
  };
}

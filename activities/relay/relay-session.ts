import { Context, log } from '@temporalio/activity';
import type { RelayActivityDeps } from './deps';
import { createFetchPendingBatch } from './fetch-pending-batch';
import { MarkInFlight } from './mark-in-flight';
import type { PendingScanBounds } from './pending-scan-bound';
import { takeSessionConnection, type SessionConnection } from './session-connection';
import type { SessionConnections } from './session-connections';
import { SessionEnding } from './session-ending';
import { watchSessionLifetime } from './session-lifetime';
import { fenceShardHolder } from '../../src/outbox/queries/fence-shard-holder';
import { lockShardForSession } from './session-lock';
import { publishUntilEnded, type SessionSteps } from './session-publish-loop';
import type { RelaySessionInput, RelaySessionOutput, RelaySessionProgress } from './types';
import type { RelayWorkerRegistry } from './worker-registry';

export type { SessionSteps } from './session-publish-loop';

/**
 * A relay session: one shard relayed for a while by the worker it is placed on — the same
 * fetch → publish → mark steps the workflow's local activities run (the very same functions),
 * as a loop inside one activity scheduled on that worker's own task queue. It ends, always after
 * its last batch is marked, when the shard is drained (then the workflow waits for events), when
 * its time or batch budget is spent, when the shard is placed on another worker, when this worker
 * leaves, or when the workflow cancels it (stop, pause). It holds the shard's advisory lock on
 * the connection it polls on, so a session Temporal gave up on (its worker hung) and its
 * successor never relay one shard at the same time. Within a session the steps overlap where
 * order allows: a batch's mark runs beside the next poll, and a full batch's send beside the poll
 * for the batch after it; sends themselves stay one at a time, in id order.
 */
export function createRelaySession(deps: RelayActivityDeps & { registry: RelayWorkerRegistry; sessionConnections: SessionConnections }, bounds: PendingScanBounds, steps: () => SessionSteps) {
  const { listener, registry, sessionConnections } = deps;

  return async function relayShardSession(input: RelaySessionInput): Promise<RelaySessionOutput> {
    const { shardIndex, shardCount } = input;
    const out: RelaySessionOutput = { workerId: registry.workerId, ended: 'drained', published: 0, batches: 0, parked: 0, lastId: 0 };
    const progress: RelaySessionProgress = { workerId: registry.workerId, state: 'locking', published: 0, batches: 0 };
    const ending = new SessionEnding(out);
    // Placed here by a fresher read of the live set than this worker's last one? Look again first.
    if (!registry.owns(shardIndex, shardCount, input)) await registry.refresh();
    if (!registry.owns(shardIndex, shardCount, input)) return { ...out, ended: 'moved' };

    const stopWatching = watchSessionLifetime(Context.current(), registry, input, ending, progress);
    const marks = new MarkInFlight();
    let connection: SessionConnection | undefined;
    // Given back to be kept only after a clean end (not thrown, its connection never failed).
    let clean = false;
    try {
      // The worker's own publish and mark activities (as registered, so a wrapper such as a test
      // fixture's fault injection sees the session's calls too).
      const sessionSteps = steps();
      connection = await takeSessionConnection(sessionConnections, () => ending.end('failed'));
      const fence = async () => {
        for (const fenced of await fenceShardHolder(deps.pool, registry.relayQueue, shardIndex)) {
          log.warn('took the shard back from a worker whose lease expired: its session terminated', { shardIndex, workerId: registry.workerId, ...fenced });
        }
      };
      if (!(await lockShardForSession(connection.client, shardIndex, ending.signal, fence))) {
        clean = true;
        return out;
      }
      // Polls run on the locked connection: if it breaks, the next poll fails and the session
      // ends, so a session never goes on relaying after losing its lock. Bodies and marks use
      // the pool (the mark overlaps the next fetch, as in the workflow's local mode).
      const fetchPendingBatch = createFetchPendingBatch({ ...deps, pool: connection.client }, bounds);
      await publishUntilEnded({ input, out, progress, ending, listener, fetchPendingBatch, steps: sessionSteps, marks });
      clean = out.ended !== 'failed';
      return out;
    } catch (err) {
      // What Kafka acknowledged is still marked before the failure is reported: fewer re-sends.
      // A mark that fails too leaves those rows pending, so the retry sends them again: said in
      // the log, the only place a re-send of this kind shows (docs/relay.md, "At least once").
      const inFlight = marks.ids.length;
      const markError = await marks.finish().then(
        () => undefined,
        (e: unknown) => String(e),
      );
      const unmarked = markError === undefined ? {} : { unmarkedAcknowledged: inFlight, markError };
      log.warn('relay session failed', { shardIndex, workerId: registry.workerId, batches: out.batches, error: String(err), ...unmarked });
      throw err;
    } finally {
      stopWatching();
      await connection?.giveBack(clean);
    }
  };
}

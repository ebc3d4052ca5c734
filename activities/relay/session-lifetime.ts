import type { Context } from '@temporalio/activity';
import type { SessionEnding } from './session-ending';
import type { RelaySessionInput, RelaySessionProgress } from './types';
import type { RelayWorkerRegistry } from './worker-registry';

// Heartbeat often: the throttle (80 % of the heartbeat timeout) decides what reaches the server.
const HEARTBEAT_EVERY_MS = 1_000;

/**
 * What ends a session from outside its loop — the workflow's cancel (stop, pause), the shard
 * placed on another worker or this worker leaving, the session's time budget — and its heartbeat
 * with `progress`. Returns what stops them all, called once the session is over.
 */
export function watchSessionLifetime(ctx: Context, registry: RelayWorkerRegistry, input: RelaySessionInput, ending: SessionEnding, progress: RelaySessionProgress): () => void {
  const { shardIndex, shardCount } = input;
  const onCancel = () => ending.end('cancelled');
  ctx.cancellationSignal.addEventListener('abort', onCancel);
  const unsubscribe = registry.onChange(() => {
    if (!registry.owns(shardIndex, shardCount, input)) ending.end('moved');
  });
  const deadline = setTimeout(() => ending.end('time-up'), input.sessionMs);
  // Only while this worker renews its lease: a worker cut off from PostgreSQL stops vouching for a
  // session it may no longer be able to finish, Temporal times the session out when the lease
  // lapses (RELAY_WORKER_VOUCH_MS + the heartbeat timeout = the TTL), and the workflow places the
  // shard on a worker that can.
  const beat = setInterval(() => {
    if (registry.vouches()) ctx.heartbeat(progress);
  }, HEARTBEAT_EVERY_MS);
  return () => {
    clearTimeout(deadline);
    clearInterval(beat);
    unsubscribe();
    ctx.cancellationSignal.removeEventListener('abort', onCancel);
  };
}

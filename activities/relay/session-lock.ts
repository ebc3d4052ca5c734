import type { SqlExecutor } from '../../src/db/executor';
import { tryShardLock } from '../../src/outbox/queries/shard-lock';
import { abortableSleep } from './abortable-sleep';

// Between two tries for a shard lock another session still holds (it is finishing its batch).
const LOCK_RETRY_MS = 500;

/**
 * Takes the shard's advisory lock on the session's connection, waiting while another session
 * (one Temporal gave up on, finishing its batch) still holds it. A holder whose worker's lease
 * has expired is fenced (`fence`: its backend terminated, fence-shard-holder.ts), so a worker
 * behind a dead link does not keep the shard for ever. False if the session ended before it got
 * the lock.
 */
export async function lockShardForSession(client: SqlExecutor, shardIndex: number, ending: AbortSignal, fence?: () => Promise<unknown>): Promise<boolean> {
  while (!(await tryShardLock(client, shardIndex))) {
    if (ending.aborted) return false;
    await fence?.();
    await abortableSleep(LOCK_RETRY_MS, ending);
  }
  return true;
}

import type { SqlExecutor } from '../../src/db/executor';
import { tryShardLock } from '../../src/outbox/queries/shard-lock';
import { abortableSleep } from './abortable-sleep';

// Between two tries for a shard lock another session still holds (it is finishing its batch).
const LOCK_RETRY_MS = 500;

/**
 * Takes the shard's advisory lock on the session's connection, waiting while another session
 * (one Temporal gave up on, finishing its batch) still holds it. False if the session ended
 * before it got the lock.
 */
export async function lockShardForSession(client: SqlExecutor, shardIndex: number, ending: AbortSignal): Promise<boolean> {
  while (!(await tryShardLock(client, shardIndex))) {
    if (ending.aborted) return false;
    await abortableSleep(LOCK_RETRY_MS, ending);
  }
  return true;
}

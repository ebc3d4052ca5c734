import type { SqlExecutor } from '../../db/executor';

/** A relay worker shutting down cleanly leaves at once: its shards move without waiting for expiry. */
export const REMOVE_RELAY_WORKER_SQL = `DELETE FROM temporal_outbox.outbox_relay_workers WHERE relay_queue = $1 AND worker_id = $2`;

export async function removeRelayWorker(db: SqlExecutor, relayQueue: string, workerId: string): Promise<void> {
  await db.query(REMOVE_RELAY_WORKER_SQL, [relayQueue, workerId]);
}

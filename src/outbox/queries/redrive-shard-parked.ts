import type { SqlExecutor } from '../../db/executor';
import { OUTBOX_NOTIFY_CHANNEL } from '../notify-channel';

/**
 * The relay shard's own re-drive (the `redrive` update): parked rows of one shard go back in the
 * queue with a fresh attempt budget. The shard filter is the poll's (fetch-pending-ids.ts), so a
 * re-drive sent to every shard touches each row exactly once. `ids` null means every parked row
 * of the shard. last_error stays as the record of why it was parked.
 */
export const REDRIVE_SHARD_PARKED_SQL = `
  UPDATE temporal_outbox.outbox_events
     SET parked_at = NULL, attempts = 0
   WHERE parked_at IS NOT NULL AND published_at IS NULL
     AND (shard_hash & 2147483647) % $1::int = $2::int
     AND ($3::bigint[] IS NULL OR id = ANY($3::bigint[]))
  RETURNING id`;

export interface RedriveShardParkedInput {
  shardCount: number;
  shardIndex: number;
  ids: number[] | null;
}

export async function redriveShardParked(db: SqlExecutor, input: RedriveShardParkedInput): Promise<number[]> {
  const { rows } = await db.query<{ id: string }>(REDRIVE_SHARD_PARKED_SQL, [input.shardCount, input.shardIndex, input.ids]);
  // An UPDATE does not fire the insert trigger: wake the idle relays ourselves.
  if (rows.length > 0) await db.query(`SELECT pg_notify($1, '')`, [OUTBOX_NOTIFY_CHANNEL]);
  return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
}

/**
 * What one notification on the outbox channel says about who should wake. Migration 0052's
 * trigger names the shards with new rows under the layout it read ('8:0,3,5'); an empty payload
 * (the trigger of 0010, a notification sent by hand), a rescan, or a layout other than the
 * waiter's own wakes every shard, so nothing that might concern a shard is ever filtered out.
 */
export interface PendingNotification {
  shardCount?: number;
  shards?: ReadonlySet<number>;
}

export interface ShardOfWaiter {
  shardIndex: number;
  shardCount: number;
}

const SHARDS_PAYLOAD = /^(\d+):(\d+(?:,\d+)*)$/;

export function parsePendingNotification(payload: string | undefined): PendingNotification {
  const match = SHARDS_PAYLOAD.exec(payload ?? '');
  if (!match) return {};
  return { shardCount: Number(match[1]), shards: new Set(match[2]!.split(',').map(Number)) };
}

/** True when the notification may concern the waiter's shard (every waiter when it cannot tell). */
export function concernsShard(notification: PendingNotification, shard: ShardOfWaiter | undefined): boolean {
  if (!shard || !notification.shards || notification.shardCount !== shard.shardCount) return true;
  return notification.shards.has(shard.shardIndex);
}

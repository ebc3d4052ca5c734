import { redriveShardParked } from '../../src/outbox/queries/redrive-shard-parked';
import type { RelayActivityDeps } from './deps';

export interface RedriveParkedInput {
  shardIndex: number;
  shardCount: number;
  /** Outbox ids to re-drive; absent means every parked row of the shard. */
  ids?: number[];
}
export interface RedriveParkedOutput {
  /** The ids put back in the queue (only this shard's, only rows that were parked). */
  redriven: number[];
}

/** Run by a relay shard for its `redrive` update, so each re-drive is an activity in its history. */
export function createRedriveParked({ pool }: RelayActivityDeps) {
  return async function redriveParked(input: RedriveParkedInput): Promise<RedriveParkedOutput> {
    return { redriven: await redriveShardParked(pool, { shardCount: input.shardCount, shardIndex: input.shardIndex, ids: input.ids ?? null }) };
  };
}

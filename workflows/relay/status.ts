// What a relay shard reports: the `status` query, current details in the UI, search attributes.

export interface RelayCounters {
  /** Rows acknowledged by Kafka and marked published, over every run of this shard. */
  published: number;
  batches: number;
  parked: number;
  /** Highest outbox id this shard has published. */
  lastId: number;
  /** Continue-as-new count: runs before the current one. */
  runs: number;
}

export interface RelayStatus extends RelayCounters {
  shardIndex: number;
  shardCount: number;
  state: 'running' | 'idle' | 'backing-off' | 'paused' | 'stopping' | 'stopped';
  /** Present while an operator has paused the shard (pause/resume signals). */
  paused?: { reason: string; since: string };
  /** Pending rows of this shard at the last count (capped at 1,000,000), null before one. */
  pending: number | null;
  /** Parked rows of this shard waiting for a redrive, at the last count. */
  parkedNow: number | null;
  batchesThisRun: number;
  updatedAt: string;
  /** Session mode: the relay worker (outbox_relay_workers.worker_id) running the shard's current or last session. */
  worker?: string;
}

export const EMPTY_COUNTERS: RelayCounters = { published: 0, batches: 0, parked: 0, lastId: 0, runs: 0 };

export function statusMarkdown(s: RelayStatus): string {
  return [
    `**Outbox relay — shard ${s.shardIndex} of ${s.shardCount}** · ${s.state}`,
    '',
    ...(s.paused ? [`Paused since ${s.paused.since}: ${s.paused.reason}. Resume: \`npx temporal-outbox relay resume --shard ${s.shardIndex}\``, ''] : []),
    '| published | batches | last id | pending | parked (waiting) | runs |',
    '|---:|---:|---:|---:|---:|---:|',
    `| ${s.published} | ${s.batches} | ${s.lastId} | ${s.pending ?? '?'} | ${s.parkedNow ?? '?'} | ${s.runs + 1} |`,
    '',
    ...(s.worker ? [`relayed by worker \`${s.worker}\``, ''] : []),
    `updated ${s.updatedAt}; query \`status\` for the same as JSON`,
  ].join('\n');
}

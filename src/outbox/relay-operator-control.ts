import { WorkflowNotFoundError, type WorkflowHandle } from '@temporalio/client';
import { relayWorkflowId } from '../config/constants';
import { pauseSignal, redriveUpdate, resumeSignal, statusQuery, type RelayStatus } from '../../workflows/relay/contract';
import { RelayControlError, type RelayControlOptions } from './relay-control';

// Pause, resume and re-drive from outside (CLI, tests), always through the shard workflows:
// signals and an update, so every action is an event in the shard's history with its reason.

export interface ShardActionResult {
  shardIndex: number;
  /** 'paused' / 'running' once the shard confirms; 'not running' when there is no shard workflow. */
  state: string;
}

async function isRunning(handle: WorkflowHandle): Promise<boolean> {
  try {
    return (await handle.describe()).status.name === 'RUNNING';
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** Polls the shard's `status` query until `done` holds (a worker answers it), or fails at the deadline. */
async function awaitState(opts: RelayControlOptions, handle: WorkflowHandle, done: (s: RelayStatus) => boolean, deadline: number): Promise<RelayStatus> {
  for (;;) {
    const status = await opts.client.connection
      .withDeadline(Math.min(deadline, Date.now() + 5_000), () => handle.query(statusQuery))
      .catch(() => undefined);
    if (status && done(status)) return status;
    if (Date.now() > deadline) {
      throw new RelayControlError(`relay workflow ${handle.workflowId} did not confirm in time (is a relay worker running? npm run worker:relay); the signal is recorded and takes effect when it runs`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Signals `pause` to each shard and waits until each says it is paused: the batch it had in hand
 * is then published and marked, and it publishes nothing more until `resume`.
 */
export async function pauseShards(opts: RelayControlOptions, shardIndexes: number[], reason: string, timeoutMs = 60_000): Promise<ShardActionResult[]> {
  return signalShards(opts, shardIndexes, timeoutMs, async (handle) => {
    await handle.signal(pauseSignal, { reason });
    return (s) => s.state === 'paused';
  });
}

/** Signals `resume` to each shard and waits until each has left the paused state. */
export async function resumeShards(opts: RelayControlOptions, shardIndexes: number[], reason: string, timeoutMs = 60_000): Promise<ShardActionResult[]> {
  return signalShards(opts, shardIndexes, timeoutMs, async (handle) => {
    await handle.signal(resumeSignal, { reason });
    return (s) => s.state !== 'paused';
  });
}

async function signalShards(
  opts: RelayControlOptions,
  shardIndexes: number[],
  timeoutMs: number,
  send: (handle: WorkflowHandle) => Promise<(s: RelayStatus) => boolean>,
): Promise<ShardActionResult[]> {
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const deadline = Date.now() + timeoutMs;
  const results: ShardActionResult[] = [];
  for (const shardIndex of shardIndexes) {
    const handle = opts.client.workflow.getHandle(workflowId(shardIndex));
    if (!(await isRunning(handle))) {
      results.push({ shardIndex, state: 'not running' });
      continue;
    }
    const done = await send(handle);
    results.push({ shardIndex, state: (await awaitState(opts, handle, done, deadline)).state });
  }
  return results;
}

/**
 * Re-drives parked rows through the shards' `redrive` update: each shard puts back its own parked
 * rows among `ids` (all of them when `ids` is null) in an activity of its history, and answers
 * with what it re-drove. Every shard of the layout must be running, or rows of a missing shard
 * would silently stay parked.
 */
export async function redriveThroughShards(opts: RelayControlOptions, shardCount: number, ids: number[] | null, reason: string): Promise<{ redriven: number[]; byShard: Record<number, number[]> }> {
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const handles = Array.from({ length: shardCount }, (_, i) => opts.client.workflow.getHandle(workflowId(i)));
  const missing: number[] = [];
  for (const [i, handle] of handles.entries()) if (!(await isRunning(handle))) missing.push(i);
  if (missing.length > 0) {
    throw new RelayControlError(`relay shards [${missing.join(', ')}] are not running, so their parked rows cannot be re-driven through them: npx temporal-outbox relay start first`);
  }
  const byShard: Record<number, number[]> = {};
  for (const [i, handle] of handles.entries()) {
    const { redriven } = await handle.executeUpdate(redriveUpdate, { args: [{ ...(ids ? { ids } : {}), reason }] });
    byShard[i] = redriven;
  }
  return { redriven: Object.values(byShard).flat().sort((a, b) => a - b), byShard };
}

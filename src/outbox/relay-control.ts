import { WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError, type Client, type WorkflowHandle } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { relayWorkflowId, SEARCH_ATTRIBUTES, TASK_QUEUES } from '../config/constants';
import type { Config } from '../config/env';
import type { SqlExecutor } from '../db/executor';
import {
  RELAY_SHARD_WORKFLOW,
  RELAY_WORKFLOW_TASK_TIMEOUT,
  statusQuery,
  stopSignal,
  type RelayShardInput,
  type RelayShardWorkflow,
  type RelayStatus,
} from '../../workflows/relay/contract';
import { readLayout, setLayout } from './queries/relay-layout';

// Operating the relay from outside (CLI, npm scripts, tests): start the shards idempotently,
// stop them gracefully, change the shard count. All of it is what the Temporal CLI commands in
// docs/relay.md do by hand.

export interface RelayControlOptions {
  client: Client;
  db: SqlExecutor;
  taskQueue: string;
  batchSize: number;
  /** The idle wait and session mode's drain grace of the shards started (RelayShardInput); the workflow's defaults where left out. */
  idleWaitMs?: number;
  drainGraceMs?: number;
  /** Workflow id of shard i; the fixed production ids unless a test supplies its own. */
  workflowId?: (shardIndex: number) => string;
}

/**
 * Control options as configured: RELAY_TASK_QUEUE, RELAY_BATCH_SIZE, RELAY_WORKFLOW_ID_PREFIX, and
 * what new shards are given (RELAY_IDLE_WAIT_MS, RELAY_DRAIN_GRACE_MS); `overrides` wins.
 */
export function configuredRelayControl(config: Config, client: Client, db: SqlExecutor, overrides: Partial<RelayControlOptions> = {}): RelayControlOptions {
  return {
    client,
    db,
    taskQueue: config.relay.taskQueue ?? TASK_QUEUES.relay,
    batchSize: config.relay.batchSize,
    workflowId: config.relay.workflowId,
    idleWaitMs: config.relay.idleWaitMs,
    drainGraceMs: config.relay.drainGraceMs,
    ...overrides,
  };
}

export class RelayControlError extends Error {
  override name = 'RelayControlError';
}

const SHARD_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayShard.name, SearchAttributeType.INT);

/**
 * Starts shards 0..N-1 that are not running; already-running shards are left alone, so this is
 * safe to run any number of times. Refuses a shard count other than the recorded layout (that
 * needs `reshard`, which stops the old relays first).
 */
export async function startRelays(opts: RelayControlOptions, shardCount: number): Promise<{ started: number[]; alreadyRunning: number[] }> {
  const layout = await readLayout(opts.db);
  if (layout !== undefined && layout !== shardCount) {
    throw new RelayControlError(`the outbox is laid out for ${layout} relay shards, not ${shardCount}: run \`npx temporal-outbox relay reshard --shards ${shardCount}\` to change it`);
  }
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const started: number[] = [];
  const alreadyRunning: number[] = [];
  for (let shardIndex = 0; shardIndex < shardCount; shardIndex++) {
    const input: RelayShardInput = {
      shardIndex,
      shardCount,
      batchSize: opts.batchSize,
      ...(opts.idleWaitMs !== undefined ? { idleWaitMs: opts.idleWaitMs } : {}),
      ...(opts.drainGraceMs !== undefined ? { drainGraceMs: opts.drainGraceMs } : {}),
    };
    try {
      await opts.client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, {
        taskQueue: opts.taskQueue,
        workflowId: workflowId(shardIndex),
        args: [input],
        // Visible in the UI's list (and filterable) before the first batch runs.
        typedSearchAttributes: [{ key: SHARD_KEY, value: shardIndex }],
        workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT,
      });
      started.push(shardIndex);
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      alreadyRunning.push(shardIndex);
    }
  }
  return { started, alreadyRunning };
}

/**
 * Signals `stop` to one shard and waits until it has closed (it finishes the batch in hand,
 * published and marked, first).
 */
async function stopShard(handle: WorkflowHandle, deadline: number): Promise<'not running' | 'stopped' | 'still running'> {
  try {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return 'not running';
    await handle.signal(stopSignal);
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'not running';
    throw err;
  }
  for (;;) {
    const { status } = await handle.describe();
    if (status.name !== 'RUNNING') return 'stopped';
    if (Date.now() > deadline) return 'still running';
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Signals `stop` to shards 0..maxShards-1 and waits until each has closed: each finishes the
 * batch in hand (publish and mark) first, so nothing is left half-done.
 */
export async function stopRelays(opts: RelayControlOptions, maxShards: number, timeoutMs = 120_000): Promise<{ stopped: number[] }> {
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const stopped: number[] = [];
  const deadline = Date.now() + timeoutMs;
  for (let shardIndex = 0; shardIndex < maxShards; shardIndex++) {
    const outcome = await stopShard(opts.client.workflow.getHandle(workflowId(shardIndex)), deadline);
    if (outcome === 'still running') {
      throw new RelayControlError(`relay shard ${shardIndex} did not stop within ${timeoutMs / 1000} s (is a relay worker running? is an activity stuck retrying?)`);
    }
    if (outcome === 'stopped') stopped.push(shardIndex);
  }
  return { stopped };
}

/**
 * Changes the shard count safely: stop every relay of the old layout (and any stray shard up
 * to 256), record the new count, start the new shards. Idempotent: re-running after a failure
 * part-way converges on the same end state.
 */
export async function reshardRelays(opts: RelayControlOptions, shardCount: number): Promise<{ from: number | undefined; stopped: number[]; started: number[] }> {
  const from = await readLayout(opts.db);
  // Beyond the recorded layout too: a relay someone started by hand with another count.
  const running = await runningShards(opts, Math.max(from ?? 0, shardCount) + 8);
  if (from === shardCount && running.length === shardCount) return { from, stopped: [], started: [] };
  const { stopped } = await stopRelays(opts, Math.max(from ?? 0, shardCount, ...running.map((i) => i + 1)));
  await setLayout(opts.db, shardCount);
  const { started } = await startRelays(opts, shardCount);
  return { from, stopped, started };
}

/** Shard indexes below `upTo` whose workflow is running, found by their fixed ids. */
async function runningShards(opts: RelayControlOptions, upTo: number): Promise<number[]> {
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const running: number[] = [];
  for (let i = 0; i < Math.min(upTo, 256); i++) {
    try {
      const { status } = await opts.client.workflow.getHandle(workflowId(i)).describe();
      if (status.name === 'RUNNING') running.push(i);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  return running;
}

type ShardReport = RelayStatus | { shardIndex: number; state: string; lastReported?: Record<string, unknown> };

export async function relayStatuses(opts: RelayControlOptions, shardCount: number): Promise<ShardReport[]> {
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const out: ShardReport[] = [];
  for (let shardIndex = 0; shardIndex < shardCount; shardIndex++) {
    const handle = opts.client.workflow.getHandle(workflowId(shardIndex));
    let description;
    try {
      description = await handle.describe();
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      out.push({ shardIndex, state: 'not started' });
      continue;
    }
    if (description.status.name !== 'RUNNING') {
      out.push({ shardIndex, state: description.status.name.toLowerCase() });
      continue;
    }
    try {
      // Bounded: with no worker polling, the server would hold the query until its own timeout.
      out.push(await opts.client.connection.withDeadline(Date.now() + 5000, () => handle.query(statusQuery)));
    } catch {
      // A query is answered by a worker; with none running, report what the server itself holds:
      // the counters the shard last wrote to its search attributes.
      const lastReported = Object.fromEntries(
        Object.values(SEARCH_ATTRIBUTES).map(({ name }) => [name, description.searchAttributes?.[name]?.[0]]),
      );
      out.push({ shardIndex, state: 'running, but no relay worker answers (start one: npm run worker:relay)', lastReported });
    }
  }
  return out;
}

/** A shard whose workflow task has failed this many times in a row is not making progress. */
const STUCK_AFTER_TASK_ATTEMPTS = 3;

/**
 * Running shards whose workflow task keeps failing — typically a nondeterminism error after the
 * relay's workflow code changed under a running shard (deployed without `relay stop` first).
 */
export async function stuckShards(opts: RelayControlOptions, shardCount: number): Promise<{ shardIndex: number; attempt: number }[]> {
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const stuck: { shardIndex: number; attempt: number }[] = [];
  for (let shardIndex = 0; shardIndex < shardCount; shardIndex++) {
    try {
      const description = await opts.client.workflow.getHandle(workflowId(shardIndex)).describe();
      const attempt = description.raw.pendingWorkflowTask?.attempt ?? 0;
      if (description.status.name === 'RUNNING' && attempt >= STUCK_AFTER_TASK_ATTEMPTS) stuck.push({ shardIndex, attempt });
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
    }
  }
  return stuck;
}

/**
 * Ends one shard: asked to stop first (it finishes its batch, so nothing is published twice, and
 * its run leaves the workers' workflow caches, which a terminated run does not); terminated when
 * it is stuck (it cannot process the signal) or has not stopped by `deadline`.
 */
export async function endShard(handle: WorkflowHandle, deadline: number, opts: { stuck: boolean; reason: string }): Promise<void> {
  if (!opts.stuck && (await stopShard(handle, deadline)) !== 'still running') return;
  await handle.terminate(opts.reason).catch((err: unknown) => {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  });
}

/**
 * Ends the given shards (endShard: stop signal, terminate if stuck or not stopped within
 * `graceMs`) and starts them afresh. Safe because a relay keeps no progress of its own: what is
 * published lives in outbox_events (published_at), so a new run picks up every pending row; the
 * worst case is the batch in flight being published again.
 */
export async function restartShards(opts: RelayControlOptions, shardIndexes: number[], shardCount: number, graceMs = 30_000): Promise<number[]> {
  const workflowId = opts.workflowId ?? relayWorkflowId;
  const stuck = new Set((await stuckShards(opts, shardCount)).map((s) => s.shardIndex));
  const deadline = Date.now() + graceMs;
  for (const shardIndex of shardIndexes) {
    await endShard(opts.client.workflow.getHandle(workflowId(shardIndex)), deadline, { stuck: stuck.has(shardIndex), reason: 'restarted by the operator (relay restart)' });
  }
  const { started } = await startRelays(opts, shardCount);
  return started;
}

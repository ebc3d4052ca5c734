import type { Client } from '@temporalio/client';
import type { StackConfig as Config } from '../../local-stack/stack-config';
import { endShard } from '../../../src/outbox/relay-control';
import { RELAY_SHARD_WORKFLOW, RELAY_WORKFLOW_TASK_TIMEOUT, statusQuery, type RelayActivityMode, type RelayShardWorkflow, type RelayStatus } from '../../../workflows/relay/contract';
import { uniqueName } from '../../../test/kit/ids';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The relay as `npm start` runs it: RELAY_SHARDS shards, RELAY_BATCH_SIZE, relay sessions (a
 * shard input without activityMode means sessions). One definition for every benchmark that
 * compares "the defaults": bench:peer kept the former default mode for a day while bench:relay
 * had moved on.
 */
export const relayDefaults = (config: Config) => ({ shards: config.relay.shards, batchSize: config.relay.batchSize, mode: 'session' as RelayActivityMode, drainGraceMs: config.relay.drainGraceMs });

/** Relay shards started by a benchmark under unique workflow ids; stopped when it is done with them. */
export class Relays {
  readonly workflowIds: string[] = [];
  constructor(private readonly client: Client, private readonly taskQueue: string) {}
  async start(opts: { shards: number; batchSize: number; mode: RelayActivityMode; drainGraceMs?: number }) {
    for (let i = 0; i < opts.shards; i++) {
      const workflowId = uniqueName(`bench-relay-${opts.mode}-shard-${i}`);
      this.workflowIds.push(workflowId);
      await this.client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, {
        taskQueue: this.taskQueue,
        workflowId,
        workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT,
        args: [{ shardIndex: i, shardCount: opts.shards, batchSize: opts.batchSize, activityMode: opts.mode, ...(opts.drainGraceMs !== undefined ? { drainGraceMs: opts.drainGraceMs } : {}) }],
      });
    }
  }
  /** Each shard's `status` query (follows continue-as-new: the handle names no run). */
  async statuses(): Promise<RelayStatus[]> {
    return Promise.all(this.workflowIds.map((id) => this.client.workflow.getHandle(id).query(statusQuery)));
  }
  /** Once every shard is idle its open workflow task has completed, so its history holds every marker. */
  async waitIdle(timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (const id of this.workflowIds) {
      while ((await this.client.workflow.getHandle(id).query(statusQuery)).state !== 'idle') {
        if (Date.now() > deadline) return;
        await sleep(100);
      }
    }
  }
  /**
   * Ends every shard as `relay restart` ends a healthy one (endShard: the `stop` signal, then
   * terminate only if it has not completed within timeoutMs). Not terminate alone: a terminated
   * run stays in its worker's workflow cache (nothing tells the worker) until the cache is full —
   * up to 60 runs at the relay's heap cap, each holding its run's state — so one worker that
   * served many benchmark runs grew by each run's leftovers
   * (BENCH_RESTART_SHARDS=terminate npm run bench:relay-soak).
   */
  async stop(timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    const ids = this.workflowIds.splice(0);
    await Promise.all(ids.map((id) => endShard(this.client.workflow.getHandle(id), deadline, { stuck: false, reason: 'benchmark run over' })));
  }
  /** Terminates every shard outright; kept to measure what that leaves behind. */
  async terminate() {
    for (const id of this.workflowIds.splice(0)) await this.client.workflow.getHandle(id).terminate('benchmark run over').catch(() => undefined);
  }
}

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Context } from '@temporalio/activity';
import { WorkflowFailedError, type Client, type Connection, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { RelayActivities } from '../../activities/relay';
import type { RelaySessionInput } from '../../activities/relay/types';
import { loadConfig } from '../../src/config/env';
import { RELAY_FAILURES, RELAY_SHARD_WORKFLOW, RELAY_WORKFLOW_TASK_TIMEOUT, statusQuery, stopSignal, type RelayShardInput, type RelayShardWorkflow } from '../../workflows/relay/contract';
import { uniqueName } from '../kit/ids';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// The relay shard's loop on its own, in seconds: the real workflow code on a real worker against
// the running dev server, with stub activities this test registers instead of PostgreSQL and
// Kafka (the unit under test is the workflow's logic: stop, continue-as-new, back-off, the
// layout mismatch's retry policy). The relay's real-service tests are relay*.integration.test.ts.

/** A scripted outbox: ids become pending when the test adds them; publish outcomes are scripted per call. */
class StubOutbox {
  pending: number[] = [];
  marked: number[] = [];
  publishCalls = 0;
  /** Returns the ids of this call that fail (stay pending); default none. */
  failing: (call: number, ids: number[]) => number[] = () => [];
  layoutMismatch = false;
  layoutChecks = 0;

  activities(): RelayActivities {
    return {
      fetchPendingBatch: async (input) => {
        this.layoutChecks += 1;
        // Thrown as retryable: only the workflow's retry policy (nonRetryableErrorTypes) can stop the retries.
        if (this.layoutMismatch) throw ApplicationFailure.create({ type: RELAY_FAILURES.layoutMismatch, message: 'stub: layout says 3 shards', nonRetryable: false });
        const excluded = new Set(input.excludeIds ?? []);
        return { ids: this.pending.filter((id) => !excluded.has(id)).slice(0, input.limit) };
      },
      publishBatch: async ({ ids }) => {
        const failed = new Set(this.failing(++this.publishCalls, ids));
        return { sentIds: ids.filter((id) => !failed.has(id)), parkedIds: [], failedIds: ids.filter((id) => failed.has(id)) };
      },
      markPublished: async ({ ids }) => {
        this.marked.push(...ids);
        this.pending = this.pending.filter((id) => !ids.includes(id));
        return { marked: ids.length };
      },
      waitForPendingEvents: async ({ timeoutMs }) => {
        const ctx = Context.current();
        const started = Date.now();
        while (Date.now() - started < timeoutMs && !ctx.cancellationSignal.aborted) {
          if (this.pending.length > 0) return { outcome: 'pending', waitedMs: Date.now() - started };
          ctx.heartbeat();
          await sleep(50);
        }
        return { outcome: 'timeout', waitedMs: Date.now() - started };
      },
      redriveParked: async () => ({ redriven: [] }),
      // Session mode's two activities; these tests run the local-activity loop (activityMode 'local').
      placeRelayShard: async () => {
        throw new Error('stub: relay sessions are not under test here');
      },
      relayShardSession: async () => {
        throw new Error('stub: relay sessions are not under test here');
      },
    } as RelayActivities;
  }
}

/**
 * Relay sessions as a shard at a steady trickle sees them: every session runs many small batches
 * (400 here, the session's own loop) and ends on its time budget. Records what each was asked.
 */
class StubSessions extends StubOutbox {
  sessionInputs: RelaySessionInput[] = [];
  /** Sessions after this many wait for `release()`, so the test reads the status at a known point. */
  holdAfter = Infinity;
  private released!: () => void;
  private readonly gate = new Promise<void>((resolve) => (this.released = resolve));

  release() {
    this.released();
  }

  override activities(): RelayActivities {
    return {
      ...super.activities(),
      placeRelayShard: async () => ({ workerId: 'stub-worker', taskQueue: Context.current().info.taskQueue, liveWorkers: 1 }),
      relayShardSession: async (input: RelaySessionInput) => {
        this.sessionInputs.push(input);
        if (this.sessionInputs.length > this.holdAfter) await this.gate;
        await sleep(20);
        const n = this.sessionInputs.length;
        return { workerId: 'stub-worker', ended: 'time-up', published: 400, batches: 400, parked: 0, lastId: 400 * n };
      },
    } as RelayActivities;
  }
}

describe('relay shard loop (workflow logic, stub activities, real dev server)', function () {
  this.timeout(60_000);
  let temporal: { client: Client; connection: Connection };
  let workerConnection: NativeConnection;
  let bundle: WorkflowBundleWithSourceMap;

  before(async () => {
    temporal = await testTemporalClient();
    workerConnection = await NativeConnection.connect({ address: loadConfig().temporal.address });
    bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows/relay'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } });
  });
  after(async () => {
    await workerConnection?.close();
    await temporal?.connection.close();
  });

  /** Runs `body` with a worker (stub activities) on a task queue of its own and a shard started on it. */
  async function withShard(outbox: StubOutbox, input: Partial<RelayShardInput>, body: (handle: WorkflowHandle<RelayShardWorkflow>) => Promise<void>) {
    const taskQueue = uniqueName('relay-loop-tq');
    const worker = await Worker.create({ connection: workerConnection, taskQueue, workflowBundle: bundle, activities: outbox.activities(), shutdownGraceTime: '1 second' });
    const workflowId = uniqueName('relay-loop');
    await worker.runUntil(async () => {
      const handle = await temporal.client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, {
        taskQueue,
        workflowId,
        workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT,
        // The local-activity loop (relay sessions run the same steps inside one activity, tested with real services).
        args: [{ shardIndex: 0, shardCount: 1, batchSize: 10, idleWaitMs: 2_000, activityMode: 'local', ...input }],
      });
      try {
        await body(handle);
      } finally {
        await handle.terminate('test finished').catch(() => undefined);
      }
    });
  }

  it('publishes and marks every pending id, goes idle, and completes on `stop` with its counters', async () => {
    const outbox = new StubOutbox();
    outbox.pending = Array.from({ length: 25 }, (_, i) => i + 1);
    await withShard(outbox, {}, async (handle) => {
      await eventually('the shard idle', async () => (await handle.query(statusQuery)).state === 'idle', 20_000, 100);
      assert.deepEqual([...outbox.marked].sort((a, b) => a - b), Array.from({ length: 25 }, (_, i) => i + 1), 'each id marked once');
      assert.equal((await handle.describe()).status.name, 'RUNNING', 'still running before the stop');
      await handle.signal(stopSignal);
      const counters = await handle.result();
      assert.equal(counters.published, 25);
      assert.equal(counters.batches, 3);
      assert.equal(counters.lastId, 25);
      assert.equal((await handle.describe()).status.name, 'COMPLETED');
    });
  });

  it('continues as new after maxBatchesPerRun, carrying its counters, without losing or repeating a batch', async () => {
    const outbox = new StubOutbox();
    outbox.pending = Array.from({ length: 50 }, (_, i) => i + 1);
    await withShard(outbox, { maxBatchesPerRun: 2 }, async (handle) => {
      await eventually('the shard idle', async () => (await handle.query(statusQuery)).state === 'idle', 30_000, 100);
      const status = await handle.query(statusQuery);
      assert.equal(status.published, 50);
      assert.ok(status.runs >= 2, `runs before the current one: ${status.runs}`);
      assert.equal(outbox.marked.length, 50, 'no batch marked twice across the runs');
      await handle.signal(stopSignal);
      const counters = await handle.result();
      assert.equal(counters.published, 50);
      assert.equal(counters.runs, status.runs);
    });
  });

  it('session mode budgets a run by sessions, not batches: a trickle of small batches does not continue as new every 500', async () => {
    const sessions = new StubSessions();
    sessions.holdAfter = 5;
    await withShard(sessions, { activityMode: 'session', maxSessionsPerRun: 8 }, async (handle) => {
      // Five sessions of 400 batches done (the sixth held): 2,000 batches, four times the local
      // mode's budget of a run, which continued as new after 500 before.
      await eventually('five sessions done, the sixth started', async () => sessions.sessionInputs.length === 6, 30_000, 50);
      const status = await handle.query(statusQuery);
      assert.equal(status.batchesThisRun, 2_000);
      assert.equal(status.runs, 0, 'still the first run');
      assert.ok(sessions.sessionInputs.every((i) => i.maxBatches === undefined), 'no session was given a batch budget');
      sessions.release();
      // The session budget (8 here) ends the run, carrying the counters.
      await eventually('continued as new after 8 sessions', async () => (await handle.query(statusQuery)).runs >= 1, 30_000, 50);
      const next = await handle.query(statusQuery);
      assert.ok(next.published >= 8 * 400, `published carried over: ${next.published}`);
    });
  });

  it('backs off while only refused rows are left, then publishes them once they go through', async () => {
    const outbox = new StubOutbox();
    outbox.pending = [1, 2, 3];
    outbox.failing = (call, ids) => (call <= 2 ? ids : []);
    await withShard(outbox, {}, async (handle) => {
      await eventually('the shard backing off', async () => (await handle.query(statusQuery)).state === 'backing-off', 20_000, 50);
      assert.deepEqual(outbox.marked, [], 'nothing marked while every row is refused');
      // Back-off is 1 s, then 2 s: the third publish goes through.
      await eventually('the rows published after the back-off', async () => outbox.marked.length === 3, 20_000, 100);
      assert.equal(outbox.publishCalls, 3);
      await eventually('the shard idle', async () => (await handle.query(statusQuery)).state === 'idle', 20_000, 100);
    });
  });

  it('fails at once on a layout mismatch: its failure type is in the retry policy, not retried', async () => {
    const outbox = new StubOutbox();
    outbox.layoutMismatch = true;
    await withShard(outbox, {}, async (handle) => {
      const err = await handle.result().then(
        () => assert.fail('the shard should fail'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError);
      let failure: unknown = err.cause;
      while (failure instanceof Error && !(failure instanceof ApplicationFailure)) failure = failure.cause;
      assert.ok(failure instanceof ApplicationFailure, `expected an ApplicationFailure in ${String(err.cause)}`);
      assert.equal(failure.type, RELAY_FAILURES.layoutMismatch);
      assert.equal(outbox.layoutChecks, 1, 'one attempt: the type is non-retryable by the workflow policy');
    });
  });
  it("refuses an activity mode it does not have (e.g. 'remote', removed in 0.2) before touching the outbox", async () => {
    const outbox = new StubOutbox();
    outbox.pending = [1, 2];
    // A start written by hand or by code of an older release: the type system no longer allows it.
    await withShard(outbox, { activityMode: 'remote' as RelayShardInput['activityMode'] }, async (handle) => {
      const err = await handle.result().then(
        () => assert.fail('the shard should fail'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof WorkflowFailedError);
      assert.ok(err.cause instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(err.cause)}`);
      assert.equal(err.cause.type, RELAY_FAILURES.unknownActivityMode);
      assert.equal(outbox.layoutChecks, 0, 'no fetch ran');
      assert.deepEqual(outbox.marked, [], 'nothing published or marked in a mode nobody chose');
    });
  });
});

import { Worker, type NativeConnection, type WorkerOptions } from '@temporalio/worker';
import type { PoolConfig } from 'pg';
import { createRelayActivities, PendingScanBounds, RelayWorkerRegistry, SessionConnections, type RelayActivities, type RelayActivityDeps } from '../activities/relay';
import { workflowSpanSinks } from '../src/observability/tracing';

// How long a shutdown waits for this worker's row to be removed before draining anyway.
const LEAVE_WAIT_MS = 2_000;
// The most time between two session heartbeats reaching Temporal. The SDK's own throttle is 80 %
// of the heartbeat timeout (4.8 s of 6 s), which would leave a session 1.2 s of slack before it
// times out; every 2 s leaves it 4 s (workflows/relay/session-activity.ts).
const SESSION_HEARTBEAT_THROTTLE = '2 seconds';
// How long a shard's next workflow task waits for the worker that ran its last one (which has its
// history cached) before any relay worker may take it. The SDK's 10 s is paid in full at every
// takeover: the worker that stepped aside or died no longer polls its sticky queue. 3 s is many
// times what a busy but healthy worker takes to poll, and the price of a miss is one replay.
const STICKY_TASK_WAIT = '3 seconds';

export interface RelayWorkerSetOptions {
  connection: NativeConnection;
  namespace: string;
  /** The shared relay task queue: shard workflows, their local activities and idle waits. */
  taskQueue: string;
  workflowBundle: WorkerOptions['workflowBundle'];
  deps: RelayActivityDeps;
  /** Where relay sessions open their dedicated connections: a URL, or the settings of the service's pool. */
  sessionDatabase: string | PoolConfig;
  bounds?: PendingScanBounds;
  shutdownGraceTime?: WorkerOptions['shutdownGraceTime'];
  /** Tracing: activity interceptors (both workers) and the workflow span sink (src/observability/tracing.ts). */
  workerOptions?: Pick<WorkerOptions, 'interceptors' | 'sinks'>;
  /** Wraps the activities before the workers register them (a test hook: workers/relay.worker.ts). */
  wrapActivities?: (activities: RelayActivities) => RelayActivities;
  /** Fixed worker id (tests); by default host-pid-random. */
  workerId?: string;
  /** How long the worker's links have answered every health check (workers/link-streak.ts); by default always. */
  linksOkForMs?: () => number | null;
}

export interface RelayWorkerSet {
  registry: RelayWorkerRegistry;
  activities: RelayActivities;
  /** Runs until shutdown(); rejects if either worker fails. */
  run(): Promise<void>;
  /**
   * Leaves the live set first (sessions here end after their batch and move on), then drains.
   * `stepAside`: a link is down, so the sessions' statements in flight are abandoned rather than
   * waited for (SessionConnections.abandonInUse).
   */
  shutdown(stepAside?: boolean): Promise<void>;
}

/** Both workers, or the first failure once both creations have ended (a worker created beside one that failed is shut down). */
async function bothOrNeither(a: Promise<Worker>, b: Promise<Worker>): Promise<[Worker, Worker]> {
  const [ra, rb] = await Promise.allSettled([a, b]);
  if (ra.status === 'fulfilled' && rb.status === 'fulfilled') return [ra.value, rb.value];
  for (const r of [ra, rb]) {
    if (r.status !== 'fulfilled') continue;
    try {
      r.value.shutdown();
    } catch {
      // never run: nothing to drain
    }
  }
  throw ra.status === 'rejected' ? ra.reason : (rb as PromiseRejectedResult).reason;
}

/**
 * One relay worker process's Temporal side: a worker on the shared relay task queue (every relay
 * worker polls it: workflow tasks, which any of them may run) and one on this process's own task
 * queue, where the relay sessions of the shards placed on it are scheduled. Registered in
 * outbox_relay_workers before it polls, so the first placement that reads the table can use it.
 */
export async function createRelayWorkerSet(opts: RelayWorkerSetOptions): Promise<RelayWorkerSet> {
  const registry = new RelayWorkerRegistry(opts.deps.pool, opts.taskQueue, opts.workerId, opts.linksOkForMs);
  const sessionConnections = new SessionConnections(opts.sessionDatabase, registry.workerId, opts.deps.config.database.schema, opts.deps.config.links.database);
  const activities = createRelayActivities({ ...opts.deps, registry, sessionConnections }, opts.bounds ?? new PendingScanBounds(opts.deps.config.relay.fullScanIntervalMs), opts.wrapActivities);
  const common = { connection: opts.connection, namespace: opts.namespace, activities, shutdownGraceTime: opts.shutdownGraceTime ?? '10 seconds', interceptors: opts.workerOptions?.interceptors };
  // Our bundles carry the OpenTelemetry workflow interceptors, so the sink their spans leave
  // through must be there even when this process exports nothing (it then drops them).
  // Created side by side: a worker's creation is mostly waiting (its workflow sandbox, the server's
  // namespace check), and a rejoin after a step-aside waits for both (docs/guarantees.md#stepping-aside).
  const [shared, own] = await bothOrNeither(
    Worker.create({
      ...common,
      taskQueue: opts.taskQueue,
      workflowBundle: opts.workflowBundle,
      sinks: opts.workerOptions?.sinks ?? workflowSpanSinks(),
      stickyQueueScheduleToStartTimeout: STICKY_TASK_WAIT,
    }),
    Worker.create({ ...common, taskQueue: registry.taskQueue, maxHeartbeatThrottleInterval: SESSION_HEARTBEAT_THROTTLE }),
  );
  await registry.join();
  let left: Promise<void> | undefined;
  const shutdown = (stepAside = false) => {
    if (stepAside) sessionConnections.abandonInUse();
    // Leaving is one DELETE; on a dead database link it is not waited for (the row expires).
    left ??= Promise.race([registry.leave(), new Promise<void>((resolve) => setTimeout(resolve, LEAVE_WAIT_MS).unref())]).finally(() => {
      for (const w of [shared, own]) if (w.getState() === 'RUNNING') w.shutdown();
    });
    return left;
  };
  return {
    registry,
    activities,
    async run() {
      const runs = [shared.run(), own.run()];
      try {
        await Promise.all(runs);
      } catch (err) {
        // One worker failed: take the other down too, so the process exits and is restarted.
        await shutdown();
        await Promise.allSettled(runs);
        throw err;
      } finally {
        // Every session has ended by now (the workers drained): what they left is closed.
        await sessionConnections.close();
      }
    },
    shutdown,
  };
}

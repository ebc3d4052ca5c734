import {
  type ActivityOptions,
  allHandlersFinished,
  type LocalActivityOptions,
  ActivityCancellationType,
  CancellationScope,
  condition,
  makeContinueAsNewFunc,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure, defineSearchAttributeKey, SearchAttributeType, TimeoutFailure } from '@temporalio/common';
import type { RelayActivities } from '../../activities/relay';
import { SEARCH_ATTRIBUTES } from '../../src/config/constants';
import { RELAY_WORKFLOW_TASK_TIMEOUT } from './timeouts';
import { PROGRAMMING_ERRORS } from '../programming-errors';
import { pauseSignal, redriveUpdate, resumeSignal, type PauseState } from './operator';
import { RELAY_FAILURES, RELAY_SESSION_RUN_BUDGET_PATCH, RELAY_SESSIONS_PATCH, statusQuery, stopSignal, type RelayActivityMode, type RelayShardInput } from './contract';
import { EMPTY_COUNTERS, statusMarkdown, type RelayCounters, type RelayStatus } from './status';

// ── Local mode (the default before relay sessions; runs started before them replay as it) ─────
// Fetch, publish and mark run inside the worker that runs this workflow: no task-queue dispatch
// and no workflow task per call; each result is recorded as one marker event when the workflow
// task completes. What that means for a crash: a worker killed before its workflow task
// completed loses the markers since the last completion, and the next worker re-runs those
// calls on replay. Fetch re-reads whatever is pending now, publish re-sends (at-least-once,
// exactly the crash gap the inbox absorbs) and mark is idempotent — no guarantee changes, only
// *which* crash moments produce a duplicate (docs/relay.md, "Guarantees").
//
// Timeouts: a local activity may outlive the workflow task timeout (RELAY_WORKFLOW_TASK_TIMEOUT,
// 5 s): the worker heartbeats the task while it runs, recording the markers so far each time. Retries whose backoff stays under localRetryThreshold are
// slept inside the worker; longer ones become a durable workflow timer, so a long PostgreSQL
// or Kafka outage does not hold a workflow task open. Every policy retries forever, as below.
//
// Forever includes errors named like programming errors (TypeError, ...), unlike the bounded
// activities elsewhere (workflows/programming-errors.ts): kafkajs and pg raise TypeErrors of
// their own on connection churn (a broker or server restarting mid-request), and a perpetual
// shard ended by one would stop publishing its keys until someone restarts it. A real bug shows
// instead as the shard's pending activity with its attempt count and last failure in the UI,
// and as `doctor`'s oldest-pending-age failure.

// Reads only (layout check, poll, sometimes a capped count): well under a second. PostgreSQL
// down must not end a perpetual relay; a layout mismatch is an operator error, not retried.
const localFetchActivity = {
  startToCloseTimeout: '10 seconds',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds', nonRetryableErrorTypes: [RELAY_FAILURES.layoutMismatch] },
} satisfies LocalActivityOptions;

// One producer.send of up to a few thousand rows (kafkajs retries a send itself for ~30 s
// before failing). Local activities cannot heartbeat; a killed worker is detected by its
// workflow task timing out (5 s) instead, after which another worker replays and re-sends.
// The generous start-to-close only bounds a send that hangs; a timed-out attempt is retried.
const localPublishActivity = {
  startToCloseTimeout: '2 minutes',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} satisfies LocalActivityOptions;

// One UPDATE by primary key, idempotent (published_at IS NULL): retrying, or re-running it on
// replay after a crash, is always safe.
const localMarkActivity = {
  startToCloseTimeout: '15 seconds',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '200 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} satisfies LocalActivityOptions;

// ── Local mode's idle wait ──────────────────────────────────────────────────────────────────
// The idle wait stays an ordinary activity: it may last a minute, and a local
// activity would hold the workflow task open all that time (heartbeats, queries and signals
// waiting on it). It heartbeats at every fallback poll (10 s by default); cancellation (a stop
// signal) reaches it through that heartbeat. A failure only means "look again".
const waitActivity = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  cancellationType: ActivityCancellationType.TRY_CANCEL,
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
} satisfies ActivityOptions;

type BatchActivities = Pick<RelayActivities, 'fetchPendingBatch' | 'publishBatch' | 'markPublished'>;
const LOCAL_BATCH_ACTIVITIES: BatchActivities = {
  fetchPendingBatch: proxyLocalActivities<RelayActivities>(localFetchActivity).fetchPendingBatch,
  publishBatch: proxyLocalActivities<RelayActivities>(localPublishActivity).publishBatch,
  markPublished: proxyLocalActivities<RelayActivities>(localMarkActivity).markPublished,
};
const { waitForPendingEvents } = proxyActivities<RelayActivities>(waitActivity);

// ── Session mode (default) ────────────────────────────────────────────────────────────────
// Where the shard's next session runs: one indexed read of the live relay workers, in whichever
// worker runs this workflow task. Retried forever: PostgreSQL down must not end the relay.
const { placeRelayShard } = proxyLocalActivities<RelayActivities>({
  startToCloseTimeout: '10 seconds',
  localRetryThreshold: '5 seconds',
  retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

// A relay session on the placed worker's own task queue. Never retried by Temporal: a retry
// would go to the same queue, i.e. to the same (perhaps dead) worker; the workflow re-places the
// shard and starts a new session instead, backing off as a retry policy would (below).
// - heartbeat 10 s: a killed or hung worker's session times out within 10 s of its last beat;
// - schedule-to-start 15 s: a worker that died after being placed never picks it up;
// - start-to-close: the session's own length plus room for a slow last batch;
// - cancellation waits for the session to finish its batch (stop, pause): nothing half done.
const SESSION_HEARTBEAT_TIMEOUT = '10 seconds';
const sessionOn = (taskQueue: string, sessionMs: number) =>
  proxyActivities<RelayActivities>({
    taskQueue,
    scheduleToStartTimeout: '15 seconds',
    startToCloseTimeout: sessionMs + 180_000,
    heartbeatTimeout: SESSION_HEARTBEAT_TIMEOUT,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 1 },
  }).relayShardSession;
const DEFAULT_SESSION_MS = 30_000;
// A drained shard stays in its session this long for more rows before the idle wait takes over.
// 2 s until 2026-12-05: a trickle with pauses of 2–10 s (an ordinary quiet hour) then paid a full
// wake per event, and each burst after such a pause waited 200–280 ms for it (bench:relay-wake).
const DEFAULT_SESSION_DRAIN_GRACE_MS = 10_000;
// A worker whose session timed out is left out of this shard's placement for this long (its row
// in outbox_relay_workers expires within 15 s if it is dead).
const AVOID_TIMED_OUT_WORKER_MS = 60_000;
const sessionBackoffMs = (streak: number) => Math.min(30_000, 1_000 * 2 ** Math.min(streak - 1, 5));

// An operator's re-drive (the `redrive` update): one UPDATE of the shard's parked rows. An
// ordinary activity, so it appears in the history and the UI with its input and result. A few
// retries cover a PostgreSQL restart; the operator sees a failure rather than a hang.
const redriveActivity = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 5, nonRetryableErrorTypes: [...PROGRAMMING_ERRORS] },
} satisfies ActivityOptions;
const { redriveParked } = proxyActivities<RelayActivities>(redriveActivity);

// The next run gets the relay's own task timeout even if this one was started with Temporal's
// default (e.g. by a `temporal workflow start` without --task-timeout).
const continueAsNewRelay = makeContinueAsNewFunc<typeof relayShardWorkflow>({ workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT });

const SHARD = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayShard.name, SearchAttributeType.INT);
const PUBLISHED = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayPublished.name, SearchAttributeType.INT);
const PENDING = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayPending.name, SearchAttributeType.INT);
const STATUS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.relayStatus.name, SearchAttributeType.KEYWORD);

// Each upsert is one history event; refresh the counters every few batches, state at once.
const SEARCH_ATTRIBUTE_EVERY_BATCHES = 10;
const BACKLOG_COUNT_EVERY_BATCHES = 20;
const DEFAULT_MAX_BATCHES_PER_RUN = 500;
// A session loop adds about ten history events (placement, the session, its workflow tasks, the
// search attributes): 200 sessions stay well inside Temporal's suggested history size.
const DEFAULT_MAX_SESSIONS_PER_RUN = 200;
const DEFAULT_IDLE_WAIT_MS = 60_000;

/**
 * One shard of the outbox relay, forever: fetch pending ids → publish → mark published.
 * Fixed workflow id per shard (src/config/constants relayWorkflowId), so Temporal itself refuses a
 * second relay for the same shard; the layout check refuses relays of another shard count.
 */
export async function relayShardWorkflow(input: RelayShardInput): Promise<RelayCounters> {
  const maxBatchesPerRun = input.maxBatchesPerRun ?? DEFAULT_MAX_BATCHES_PER_RUN;
  const counters: RelayCounters = { ...EMPTY_COUNTERS, ...input.counters };
  const status: RelayStatus = {
    ...counters,
    shardIndex: input.shardIndex,
    shardCount: input.shardCount,
    state: 'running',
    pending: null,
    parkedNow: null,
    batchesThisRun: 0,
    updatedAt: new Date().toISOString(),
    ...(input.paused ? { paused: input.paused } : {}),
  };
  let stopRequested = false;
  let paused: PauseState | undefined = input.paused;
  let interruptible: CancellationScope | undefined;
  let lastUpsert = { state: '', published: -1, pending: -2 };
  let lastDetailsWorker: string | undefined;

  setHandler(statusQuery, () => status);
  setHandler(stopSignal, () => {
    stopRequested = true;
    interruptible?.cancel();
  });
  setHandler(pauseSignal, ({ reason }) => {
    paused = { reason: reason || 'paused by an operator', since: new Date().toISOString() };
    // An idle wait or a back-off ends now; a batch being published finishes first.
    interruptible?.cancel();
  });
  setHandler(resumeSignal, () => {
    paused = undefined;
  });
  setHandler(redriveUpdate, async ({ ids }) => {
    const { redriven } = await redriveParked({ shardIndex: input.shardIndex, shardCount: input.shardCount, ids });
    if (status.parkedNow !== null) status.parkedNow = Math.max(0, status.parkedNow - redriven.length);
    return { redriven };
  });

  const report = (state: RelayStatus['state'], force = false) => {
    Object.assign(status, counters, { state, updatedAt: new Date().toISOString() });
    const changed = state !== lastUpsert.state || status.published !== lastUpsert.published || (status.pending ?? -1) !== lastUpsert.pending || status.worker !== lastDetailsWorker;
    if (!changed) return;
    setCurrentDetails(statusMarkdown(status));
    lastDetailsWorker = status.worker;
    if (force || state !== lastUpsert.state || status.batchesThisRun % SEARCH_ATTRIBUTE_EVERY_BATCHES === 0) {
      upsertSearchAttributes([
        { key: SHARD, value: input.shardIndex },
        { key: PUBLISHED, value: status.published },
        { key: PENDING, value: status.pending ?? 0 },
        { key: STATUS, value: state },
      ]);
      lastUpsert = { state, published: status.published, pending: status.pending ?? -1 };
    }
  };

  /** Runs `work` so that a stop signal interrupts it; returns quietly when interrupted. */
  const untilStopped = async (work: () => Promise<unknown>) => {
    interruptible = new CancellationScope();
    try {
      await interruptible.run(work);
    } catch (err) {
      if (!isCancellation(err)) throw err;
    } finally {
      interruptible = undefined;
    }
  };

  report('running', true);
  const mode: RelayActivityMode = input.activityMode ?? (patched(RELAY_SESSIONS_PATCH) ? 'session' : 'local');
  if (mode !== 'session' && mode !== 'local') {
    // 'remote' (removed in 0.2, benchmark-only) or a typo from a hand-written start: refuse at once
    // rather than run a mode nobody chose (docs/upgrading.md).
    throw ApplicationFailure.create({ type: RELAY_FAILURES.unknownActivityMode, nonRetryable: true, message: `unknown relay activityMode ${JSON.stringify(mode)}: use 'session' (the default) or 'local'` });
  }
  if (mode === 'session') {
    const avoidUntil = new Map<string, number>();
    let failureStreak = 0;
    let drained = false;
    // A run's budget: sessions, plus batches only when the starter set one. Runs recorded before
    // the patch had the local mode's 500-batch default here, and replay with it.
    const budgetBySessions = patched(RELAY_SESSION_RUN_BUDGET_PATCH);
    const batchBudget = budgetBySessions ? input.maxBatchesPerRun : maxBatchesPerRun;
    const maxSessionsPerRun = budgetBySessions ? (input.maxSessionsPerRun ?? DEFAULT_MAX_SESSIONS_PER_RUN) : Infinity;
    let sessionsThisRun = 0;
    while (!stopRequested) {
      const budgetSpent = (batchBudget !== undefined && status.batchesThisRun >= batchBudget) || sessionsThisRun >= maxSessionsPerRun;
      if (budgetSpent || workflowInfo().continueAsNewSuggested) {
        counters.runs += 1;
        await condition(allHandlersFinished);
        await continueAsNewRelay({ ...input, counters, paused });
      }
      if (paused) {
        status.paused = paused;
        report('paused');
        await condition(() => paused === undefined || stopRequested || workflowInfo().continueAsNewSuggested);
        if (paused === undefined) {
          delete status.paused;
          report('running', true);
        }
        continue;
      }
      if (drained) {
        report('idle');
        let outcome: string | undefined;
        await untilStopped(async () => {
          ({ outcome } = await waitForPendingEvents({ shardIndex: input.shardIndex, shardCount: input.shardCount, timeoutMs: input.idleWaitMs ?? DEFAULT_IDLE_WAIT_MS }));
        });
        // Timed out, stopped or paused: back to the top (an idle shard starts no session).
        if (outcome !== 'pending') continue;
        drained = false;
      }
      const now = Date.now();
      const avoid = [...avoidUntil].filter(([, until]) => until > now).map(([workerId]) => workerId);
      const place = await placeRelayShard({ shardIndex: input.shardIndex, shardCount: input.shardCount, avoid });
      if (!place.taskQueue) {
        // No relay worker has heartbeated lately (they cannot reach PostgreSQL): look again soon.
        failureStreak += 1;
        report('backing-off');
        await untilStopped(() => sleep(sessionBackoffMs(failureStreak)));
        continue;
      }
      status.worker = place.workerId;
      report('running');
      const relayShardSession = sessionOn(place.taskQueue, input.sessionMs ?? DEFAULT_SESSION_MS);
      let result: Awaited<ReturnType<typeof relayShardSession>> | undefined;
      sessionsThisRun += 1;
      try {
        await untilStopped(async () => {
          result = await relayShardSession({
            shardIndex: input.shardIndex,
            shardCount: input.shardCount,
            batchSize: input.batchSize,
            ...(batchBudget !== undefined ? { maxBatches: batchBudget - status.batchesThisRun } : {}),
            sessionMs: input.sessionMs ?? DEFAULT_SESSION_MS,
            drainGraceMs: input.drainGraceMs ?? DEFAULT_SESSION_DRAIN_GRACE_MS,
            avoid,
          });
        });
      } catch (err) {
        const cause = err instanceof ActivityFailure ? err.cause : undefined;
        // An operator error (another shard count): as in the other modes, the relay fails loudly.
        if (cause instanceof ApplicationFailure && cause.type === RELAY_FAILURES.layoutMismatch) throw cause;
        if (cause instanceof TimeoutFailure) avoidUntil.set(place.workerId!, Date.now() + AVOID_TIMED_OUT_WORKER_MS);
        failureStreak += 1;
        report('backing-off');
        await untilStopped(() => sleep(sessionBackoffMs(failureStreak)));
        continue;
      }
      if (!result) continue;
      failureStreak = 0;
      counters.published += result.published;
      counters.batches += result.batches;
      counters.parked += result.parked;
      counters.lastId = Math.max(counters.lastId, result.lastId);
      status.batchesThisRun += result.batches;
      if (result.backlog) Object.assign(status, { pending: result.backlog.pending, parkedNow: result.backlog.parked });
      if (result.ended === 'drained') {
        drained = true;
        status.pending = 0;
      }
      // A session is already many batches (or 30 s): its end is when the list's counters move.
      // Counting batches for this, as local mode does, would rarely hit a multiple of 10 here.
      report('running', true);
    }
    report('stopped', true);
    return counters;
  }
  const { fetchPendingBatch, publishBatch, markPublished } = LOCAL_BATCH_ACTIVITIES;
  let failureStreak = 0;

  // The mark of batch k overlaps the fetch and publish of batch k+1 (at most one mark in flight;
  // the fetch skips the ids being marked). Kafka order is untouched: publishes stay strictly one
  // after the other.
  let marking: { ids: number[]; done: Promise<void> } | undefined;
  const finishMarking = async () => {
    const m = marking;
    marking = undefined;
    await m?.done;
  };
  const mark = (sentIds: number[], parkedCount: number) => {
    const done = markPublished({ ids: sentIds }).then(() => {
      counters.published += sentIds.length;
      counters.lastId = sentIds.reduce((max, id) => Math.max(max, id), counters.lastId);
      if (status.pending !== null) status.pending = Math.max(0, status.pending - sentIds.length - parkedCount);
    });
    return done;
  };

  while (!stopRequested) {
    if (status.batchesThisRun >= maxBatchesPerRun || workflowInfo().continueAsNewSuggested) {
      // Nothing crosses the boundary half done: the last batch is marked before the new run.
      await finishMarking();
      counters.runs += 1;
      // A re-drive update still running would be cut off by the new run: let it answer first.
      await condition(allHandlersFinished);
      await continueAsNewRelay({ ...input, counters, paused });
    }
    if (paused) {
      // Nothing in flight while paused: the last batch is marked before the shard says so.
      await finishMarking();
      status.paused = paused;
      report('paused');
      await condition(() => paused === undefined || stopRequested || workflowInfo().continueAsNewSuggested);
      if (paused === undefined) {
        delete status.paused;
        report('running', true);
      }
      continue;
    }
    const { ids, backlog } = await fetchPendingBatch({
      shardIndex: input.shardIndex,
      shardCount: input.shardCount,
      limit: input.batchSize,
      countBacklog: status.batchesThisRun % BACKLOG_COUNT_EVERY_BATCHES === 0,
      ...(marking ? { excludeIds: marking.ids } : {}),
    });
    if (backlog) Object.assign(status, { pending: backlog.pending, parkedNow: backlog.parked });

    if (ids.length === 0) {
      await finishMarking();
      report('idle');
      await untilStopped(() =>
        waitForPendingEvents({ shardIndex: input.shardIndex, shardCount: input.shardCount, timeoutMs: input.idleWaitMs ?? DEFAULT_IDLE_WAIT_MS }),
      );
      continue;
    }

    const { sentIds, parkedIds, failedIds } = await publishBatch({ shardIndex: input.shardIndex, ids });
    // The previous batch's mark has had the whole fetch and publish to finish; at most one in flight.
    await finishMarking();
    counters.batches += 1;
    counters.parked += parkedIds.length;
    status.batchesThisRun += 1;
    if (sentIds.length > 0) {
      marking = { ids: sentIds, done: mark(sentIds, parkedIds.length) };
    } else if (status.pending !== null) {
      status.pending = Math.max(0, status.pending - parkedIds.length);
    }

    if (sentIds.length === 0 && parkedIds.length === 0 && failedIds.length > 0) {
      // Only refused rows left and they keep their place (order per key): back off instead of
      // spinning, until they succeed or run out of attempts and are parked.
      failureStreak += 1;
      report('backing-off');
      await untilStopped(() => sleep(Math.min(30_000, 1_000 * 2 ** Math.min(failureStreak - 1, 5))));
    } else {
      failureStreak = 0;
      report('running');
    }
  }
  await finishMarking();
  report('stopped', true);
  return counters;
}

import { patched, workflowInfo } from '@temporalio/workflow';
import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/common';
import type { PlaceRelayShardOutput, RelaySessionOutput } from '../../activities/relay/types';
import { continueAsNewShard, DEFAULT_MAX_BATCHES_PER_RUN, DEFAULT_MAX_SESSIONS_PER_RUN } from './continue-as-new';
import { RELAY_FAILURES, RELAY_SESSION_KEEPS_WORKER_PATCH, RELAY_SESSION_RUN_BUDGET_PATCH } from './contract';
import { waitWhileIdle } from './idle-wait';
import { holdWhilePaused } from './pause';
import { ShardPlacement } from './placement';
import { DEFAULT_SESSION_DRAIN_GRACE_MS, DEFAULT_SESSION_MS, sessionOn } from './session-activity';
import type { ShardRun } from './shard-run';

/**
 * Session mode (the default): the shard relayed by relay sessions, each one activity running
 * fetch → publish → mark in a loop on the relay worker the shard is placed on. Between sessions
 * the workflow records the counters, places the shard again, waits while it is idle or paused,
 * and backs off after a failed placement or session. Ends on a stop, or continues as new when
 * the run's budget is spent.
 */
export async function relayBySessions(run: ShardRun): Promise<void> {
  const { input, status } = run;
  const placement = new ShardPlacement(input);
  let failureStreak = 0;
  let drained = false;
  // A run's budget: sessions, plus batches only when the starter set one. Runs recorded before
  // the patch had the local mode's 500-batch default here, and replay with it.
  const budgetBySessions = patched(RELAY_SESSION_RUN_BUDGET_PATCH);
  const batchBudget = budgetBySessions ? input.maxBatchesPerRun : (input.maxBatchesPerRun ?? DEFAULT_MAX_BATCHES_PER_RUN);
  const maxSessionsPerRun = budgetBySessions ? (input.maxSessionsPerRun ?? DEFAULT_MAX_SESSIONS_PER_RUN) : Infinity;
  let sessionsThisRun = 0;
  // Where the last session ran, when it ended only because its budget was spent: the worker was
  // relaying the shard a moment ago, so the next session goes there without a placement round
  // trip. The session checks on arrival that the worker still owns the shard ('moved' if not:
  // then it is placed as usual), and any other ending places it afresh.
  let keptPlace: PlaceRelayShardOutput | undefined;
  while (!run.stopRequested) {
    const budgetSpent = (batchBudget !== undefined && status.batchesThisRun >= batchBudget) || sessionsThisRun >= maxSessionsPerRun;
    if (budgetSpent || workflowInfo().continueAsNewSuggested) await continueAsNewShard(run);
    if (run.paused) {
      keptPlace = undefined;
      await holdWhilePaused(run);
      continue;
    }
    if (drained) {
      // Timed out, stopped or paused: back to the top (an idle shard starts no session).
      if ((await waitWhileIdle(run)) !== 'pending') continue;
      drained = false;
    }
    const { place, avoid, avoidSince } = keptPlace ? { place: keptPlace, ...placement.avoidance() } : await placement.place();
    keptPlace = undefined;
    if (!place.taskQueue) {
      // No relay worker has heartbeated lately (they cannot reach PostgreSQL): look again soon.
      failureStreak += 1;
      await run.backOff(failureStreak);
      continue;
    }
    status.worker = place.workerId;
    run.report('running');
    const relayShardSession = sessionOn(place.taskQueue, input.sessionMs ?? DEFAULT_SESSION_MS);
    let result: RelaySessionOutput | undefined;
    sessionsThisRun += 1;
    try {
      await run.untilStopped(async () => {
        result = await relayShardSession({
          shardIndex: input.shardIndex,
          shardCount: input.shardCount,
          batchSize: input.batchSize,
          ...(batchBudget !== undefined ? { maxBatches: batchBudget - status.batchesThisRun } : {}),
          sessionMs: input.sessionMs ?? DEFAULT_SESSION_MS,
          drainGraceMs: input.drainGraceMs ?? DEFAULT_SESSION_DRAIN_GRACE_MS,
          avoid,
          avoidSince,
        });
      });
    } catch (err) {
      const cause = err instanceof ActivityFailure ? err.cause : undefined;
      // An operator error (another shard count): as in the other modes, the relay fails loudly.
      if (cause instanceof ApplicationFailure && cause.type === RELAY_FAILURES.layoutMismatch) throw cause;
      // A session that timed out (its worker dead, hung or cut off) or failed (its worker stepping
      // aside abandons what its sessions wait on): its worker is left out of the next placements
      // for a while, since its row may stay live for the rest of its lease.
      if (cause instanceof TimeoutFailure || cause instanceof ApplicationFailure) placement.avoid(place.workerId!);
      failureStreak += 1;
      await run.backOff(failureStreak);
      continue;
    }
    if (!result) continue;
    failureStreak = 0;
    drained = recordSession(run, result);
    const { ended } = result as RelaySessionOutput;
    if ((ended === 'time-up' || ended === 'batch-budget') && patched(RELAY_SESSION_KEEPS_WORKER_PATCH)) keptPlace = place;
    // A session is already many batches (or 30 s): its end is when the list's counters move.
    // Counting batches for this, as local mode does, would rarely hit a multiple of 10 here.
    run.report('running', true);
  }
}

/** Adds a finished session's work to the shard's counters and status; true if it drained the shard. */
function recordSession({ counters, status }: ShardRun, result: RelaySessionOutput): boolean {
  counters.published += result.published;
  counters.batches += result.batches;
  counters.parked += result.parked;
  counters.lastId = Math.max(counters.lastId, result.lastId);
  status.batchesThisRun += result.batches;
  if (result.backlog) Object.assign(status, { pending: result.backlog.pending, parkedNow: result.backlog.parked });
  if (result.ended !== 'drained') return false;
  status.pending = 0;
  return true;
}

import { CancellationScope, isCancellation, sleep } from '@temporalio/workflow';
import { backoffMs } from './backoff';
import type { RelayShardInput } from './contract';
import type { PauseState } from './operator';
import { EMPTY_COUNTERS, type RelayCounters, type RelayStatus } from './status';
import { statusReporter, type ReportStatus } from './status-report';

/**
 * One run of a relay shard, as both of its loops (session and local mode) and the operator's
 * handlers see it: the counters carried across continue-as-new, the status the query answers,
 * what an operator asked for (stop, pause), and the waits a stop or a pause may cut short.
 */
export interface ShardRun {
  readonly input: RelayShardInput;
  readonly counters: RelayCounters;
  readonly status: RelayStatus;
  stopRequested: boolean;
  paused: PauseState | undefined;
  readonly report: ReportStatus;
  /** Runs `work` so that a stop or a pause interrupts it; returns quietly when interrupted. */
  untilStopped(work: () => Promise<unknown>): Promise<void>;
  /** Cuts short the wait `untilStopped` is running, if any. */
  interrupt(): void;
  /** Says so, then waits out the back-off after the `failureStreak`-th failure in a row (a stop or pause cuts it short). */
  backOff(failureStreak: number): Promise<void>;
}

export function startShardRun(input: RelayShardInput): ShardRun {
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
  let interruptible: CancellationScope | undefined;
  const run: ShardRun = {
    input,
    counters,
    status,
    stopRequested: false,
    paused: input.paused,
    report: statusReporter(input.shardIndex, counters, status),
    async untilStopped(work) {
      interruptible = new CancellationScope();
      try {
        await interruptible.run(work);
      } catch (err) {
        if (!isCancellation(err)) throw err;
      } finally {
        interruptible = undefined;
      }
    },
    interrupt() {
      interruptible?.cancel();
    },
    async backOff(failureStreak) {
      run.report('backing-off');
      await run.untilStopped(() => sleep(backoffMs(failureStreak)));
    },
  };
  return run;
}

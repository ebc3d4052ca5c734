import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { Pool } from 'pg';
import type { Config } from '../../src/config/env';
import { pruneProcessedEvents } from '../../src/inbox/prune-processed-events';
import { pruneParkedRows } from '../../src/retention/prune-parked-rows';
import { recordRetentionStep } from '../../src/observability/retention-metrics';
import { databaseTimeAgo } from '../../src/retention/database-clock';
import { planOutboxWalk } from '../../src/retention/plan-outbox-walk';
import { tableSize } from '../../src/retention/queries/table-sizes';
import { sweepPublishedOutbox, type SweepProgress } from '../../src/retention/sweep-published-outbox';
import { RETENTION_FAILURES } from '../../workflows/retention/contract';
import type {
  PruneInboxInput,
  PruneInboxResult,
  PruneParkedInput,
  PruneParkedResult,
  RetentionInput,
  RetentionPlan,
  RetentionSettings,
  SweepOutboxInput,
  SweepOutboxResult,
  TableSizes,
} from './types';

/** Progress lines in the worker log while a long sweep runs, beside the per-batch heartbeats. */
const PROGRESS_LOG_INTERVAL_MS = 10_000;

/**
 * Between batches the sweep heartbeats after each one; this keeps heartbeating the last progress
 * while one batch runs long (a lock wait, a checkpoint), so only a dead worker misses the
 * workflow's 5 s heartbeat timeout. A dead process stops this timer too.
 */
const KEEPALIVE_HEARTBEAT_MS = 1_000;

export interface RetentionActivityDeps {
  pool: Pool;
  config: Config;
}

export function createRetentionActivities({ pool, config }: RetentionActivityDeps) {
  async function measureTables(_input: Record<string, never> = {}): Promise<TableSizes> {
    const [outbox, inbox] = await Promise.all([tableSize(pool, 'outbox_events'), tableSize(pool, 'inbox_processed_events')]);
    return {
      outboxBytes: outbox?.totalBytes ?? 0,
      outboxEstimatedRows: outbox?.estimatedRows ?? 0,
      inboxBytes: inbox?.totalBytes ?? 0,
      inboxEstimatedRows: inbox?.estimatedRows ?? 0,
    };
  }

  return {
    /** Settles the run's settings, its cutoff on the database clock and the key range to walk. */
    async planRetention(input: RetentionInput): Promise<RetentionPlan> {
      const settings = settle(input, config);
      const cutoff = await databaseTimeAgo(pool, settings.windowMs);
      const walk = await planOutboxWalk(pool, cutoff);
      const sizes = await measureTables();
      const range = walk.fromId !== undefined && walk.untilId !== undefined && walk.untilId > walk.fromId ? { fromId: walk.fromId, untilId: walk.untilId } : undefined;
      log.info('retention planned', { settings, cutoff: cutoff.toISOString(), walk: range, sizes });
      return { settings, outboxCutoff: cutoff.toISOString(), walk: range, sizes };
    },

    /**
     * Deletes published outbox rows older than the cutoff, batch by batch, heartbeating where
     * the next batch starts. A retry after a crash reads that heartbeat and resumes there
     * instead of rewalking the ranges already done.
     */
    async sweepOutbox(input: SweepOutboxInput): Promise<SweepOutboxResult> {
      const ctx = Context.current();
      const started = performance.now();
      const heartbeat = ctx.info.heartbeatDetails as SweepProgress | undefined;
      // Only a heartbeat inside this sweep's own range counts (a stale one cannot skip rows).
      const resumed = heartbeat && heartbeat.nextId >= input.fromId && heartbeat.nextId <= input.untilId ? heartbeat : undefined;
      if (resumed) log.info('retention sweep resuming from its last heartbeat', { ...resumed, attempt: ctx.info.attempt });
      let lastLog = performance.now();
      let latest: SweepProgress = resumed ?? { nextId: input.fromId, deleted: 0, batches: 0 };
      const keepalive = setInterval(() => ctx.heartbeat(latest), KEEPALIVE_HEARTBEAT_MS);
      const result = await sweepPublishedOutbox(
        pool,
        {
          ...input,
          cutoff: new Date(input.cutoff),
          onBatch: (progress) => {
            latest = progress;
            ctx.heartbeat(progress);
            if (performance.now() - lastLog > PROGRESS_LOG_INTERVAL_MS) {
              lastLog = performance.now();
              log.info('retention sweep progress', { ...progress, untilId: input.untilId });
            }
            // Heartbeats deliver cancellation; stop between batches, never inside one.
            return ctx.cancellationSignal.aborted;
          },
        },
        resumed ?? {},
      ).finally(() => clearInterval(keepalive));
      const ms = Math.round(performance.now() - started);
      recordRetentionStep('sweep_outbox', { outbox_events: result.deleted }, ms);
      log.info('retention sweep finished', { ...result, ms, rowsPerSecond: ms > 0 ? Math.round((result.deleted / ms) * 1000) : undefined });
      return {
        ...result,
        resumedFromId: resumed?.nextId,
        resumedWith: resumed ? { deleted: resumed.deleted, batches: resumed.batches } : undefined,
        attempt: ctx.info.attempt,
        ms,
      };
    },

    /** Forgets processed inbox ids older than the horizon (the consumer's own pruning query). */
    async pruneInbox(input: PruneInboxInput): Promise<PruneInboxResult> {
      const ctx = Context.current();
      const started = performance.now();
      const timeBudgetMs = Math.max(1, input.deadline - Date.now());
      // No resume point to carry (its cursor restarts cheaply at the oldest row): the heartbeat
      // only says the worker is alive, under the same 5 s heartbeat timeout as the sweep.
      const keepalive = setInterval(() => ctx.heartbeat(), KEEPALIVE_HEARTBEAT_MS);
      const result = await pruneProcessedEvents(pool, { horizonMs: input.horizonMs, batchSize: input.batchSize, timeBudgetMs }).finally(() => clearInterval(keepalive));
      const ms = Math.round(performance.now() - started);
      recordRetentionStep('prune_inbox', { inbox_processed_events: result.deleted }, ms);
      log.info('inbox pruned', { ...result, ms });
      return { ...result, ms };
    },

    /** Deletes parked inbox events and parked outbox rows older than the parked-rows horizon. */
    async pruneParked(input: PruneParkedInput): Promise<PruneParkedResult> {
      const ctx = Context.current();
      const started = performance.now();
      const keepalive = setInterval(() => ctx.heartbeat(), KEEPALIVE_HEARTBEAT_MS);
      const result = await pruneParkedRows(pool, input).finally(() => clearInterval(keepalive));
      const ms = Math.round(performance.now() - started);
      recordRetentionStep('prune_parked', { inbox_parked_events: result.inboxDeleted, outbox_events: result.outboxDeleted }, ms);
      log.info('parked rows pruned', { ...result, ms });
      return { ...result, ms };
    },

    measureTables,
  };
}

export type RetentionActivities = ReturnType<typeof createRetentionActivities>;

function settle(input: RetentionInput, config: Config): RetentionSettings {
  const settings: RetentionSettings = {
    windowMs: input.windowMs ?? config.retention.windowMs,
    batchSize: input.batchSize ?? config.retention.batchSize,
    batchPauseMs: input.batchPauseMs ?? config.retention.batchPauseMs,
    timeBudgetMs: input.timeBudgetMs ?? config.retention.timeBudgetMs,
    inboxHorizonMs: input.inboxHorizonMs ?? config.inbox.retentionMs,
    parkedHorizonMs: input.parkedHorizonMs ?? config.retention.parkedRetentionMs,
  };
  const { batchPauseMs, ...positive } = settings;
  const problems = Object.entries(positive)
    .filter(([, v]) => !Number.isSafeInteger(v) || v <= 0)
    .map(([k, v]) => `${k} must be a positive integer (got ${JSON.stringify(v)})`);
  if (!Number.isSafeInteger(batchPauseMs) || batchPauseMs < 0 || batchPauseMs > 60_000) {
    problems.push(`batchPauseMs must be an integer from 0 to 60000 (got ${JSON.stringify(batchPauseMs)})`);
  }
  const minimumHorizon = config.kafka.topicRetentionMs + config.kafka.maxConsumerLagMs;
  if (settings.inboxHorizonMs <= minimumHorizon) {
    // Forgetting an id Kafka can still redeliver would let that event be credited twice.
    problems.push(`inboxHorizonMs ${settings.inboxHorizonMs} must exceed topic retention + maximum consumer lag (${minimumHorizon} ms)`);
  }
  if (problems.length > 0) {
    throw ApplicationFailure.create({ type: RETENTION_FAILURES.invalidInput, message: problems.join('; '), nonRetryable: true });
  }
  return settings;
}

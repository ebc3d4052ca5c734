import { log, patched, proxyActivities, setCurrentDetails, upsertMemo, workflowInfo, type ActivityOptions } from '@temporalio/workflow';
import type { RetentionActivities } from '../../activities/retention';
import { PROGRAMMING_ERRORS } from '../programming-errors';
import { RETENTION_FAILURES, type RetentionInput, type RetentionReport, type TableSizes } from './contract';

/** Short catalog and planning queries: seconds at most, retried with backoff while PostgreSQL restarts. */
const dbActivity = {
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: [RETENTION_FAILURES.invalidInput, ...PROGRAMMING_ERRORS] },
} satisfies ActivityOptions;

/**
 * Heartbeat timeout of the delete loops. It notices a crashed worker, and it also sets how often
 * progress reaches the server: the SDK sends at most one heartbeat per 0.8 × this (4 s). A retry
 * resumes from the last heartbeat the server holds, and the rows deleted after it are gone but
 * uncounted, so this bounds the report's undercount after a crash to ~4 s of deleting. The
 * activity heartbeats every second while a batch runs, so a slow batch is not taken for a crash.
 */
const SWEEP_HEARTBEAT_TIMEOUT = '5 seconds';

/**
 * The long delete loops. They stop themselves at the run's time budget; the start-to-close
 * timeout is only the backstop. The retry starts from the last heartbeat, so a crash costs at
 * most a few seconds of rework.
 */
function sweepActivity(timeBudgetMs: number): ActivityOptions {
  return {
    startToCloseTimeout: timeBudgetMs + 5 * 60_000,
    heartbeatTimeout: SWEEP_HEARTBEAT_TIMEOUT,
    retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10, nonRetryableErrorTypes: [...PROGRAMMING_ERRORS] },
  };
}

/**
 * One retention run, started by the `outbox-retention` Schedule (overlap: skip, so a slow run
 * is never doubled). Deletes published outbox rows older than the window and processed inbox
 * ids older than the inbox horizon, within a time budget, and reports what it did in its result,
 * its memo and its current details (all three visible in the Temporal UI).
 */
export async function retentionWorkflow(input: RetentionInput = {}): Promise<RetentionReport> {
  const started = Date.now();
  const { planRetention, measureTables } = proxyActivities<RetentionActivities>(dbActivity);
  const plan = await planRetention(input);
  const { settings } = plan;
  const { sweepOutbox, pruneInbox, pruneParked } = proxyActivities<RetentionActivities>(sweepActivity(settings.timeBudgetMs));
  const deadline = started + settings.timeBudgetMs;
  show(`Deleting published outbox rows before ${plan.outboxCutoff} (ids ${plan.walk ? `${plan.walk.fromId}–${plan.walk.untilId}` : 'none'})`, plan.sizes);

  const outbox = plan.walk
    ? await sweepOutbox({ cutoff: plan.outboxCutoff, ...plan.walk, batchSize: settings.batchSize, pauseMs: settings.batchPauseMs, deadline })
    : { deleted: 0, batches: 0, complete: true, stoppedBy: 'done' as const, resumedFromId: undefined, resumedWith: undefined, attempt: 1 };
  show(`Outbox: ${outbox.deleted} rows deleted in ${outbox.batches} batches. Pruning the inbox…`, plan.sizes);

  // The inbox may use what is left of the budget, but always gets a moment: a run whose outbox
  // sweep used the whole budget must not starve the inbox forever.
  const inbox = await pruneInbox({ horizonMs: settings.inboxHorizonMs, batchSize: settings.batchSize, deadline: Math.max(deadline, Date.now() + 10_000) });
  // Parked rows (inbox and outbox) past PARKED_RETENTION_MS: few rows, so a short moment of its
  // own like the inbox. Behind patched(): runs started by older workflow code replay without it.
  const parked =
    patched('prune-parked-rows') && settings.parkedHorizonMs !== undefined
      ? await pruneParked({ horizonMs: settings.parkedHorizonMs, batchSize: settings.batchSize, deadline: Math.max(deadline, Date.now() + 10_000) })
      : undefined;
  const sizeAfter = await measureTables({});

  const report: RetentionReport = {
    settings,
    outbox: { cutoff: plan.outboxCutoff, deleted: outbox.deleted, batches: outbox.batches, complete: outbox.complete, resumedFromId: outbox.resumedFromId, resumedWith: outbox.resumedWith, attempts: outbox.attempt },
    inbox: { cutoff: inbox.cutoff, deleted: inbox.deleted, batches: inbox.batches, complete: inbox.complete },
    parked: parked && { cutoff: parked.cutoff, inboxDeleted: parked.inboxDeleted, outboxDeleted: parked.outboxDeleted, complete: parked.complete },
    rowsDeleted: outbox.deleted + inbox.deleted + (parked ? parked.inboxDeleted + parked.outboxDeleted : 0),
    batches: outbox.batches + inbox.batches,
    stoppedBy: outbox.stoppedBy === 'done' && (!inbox.complete || parked?.complete === false) ? 'time-budget' : outbox.stoppedBy,
    durationMs: Date.now() - started,
    sizeBefore: plan.sizes,
    sizeAfter,
  };
  upsertMemo({ retention: summary(report) });
  setCurrentDetails(details(report));
  log.info('retention run finished', { ...summary(report) });
  return report;
}

function show(status: string, sizes: TableSizes) {
  setCurrentDetails(`**Retention run ${workflowInfo().workflowId}**\n\n${status}\n\nBefore: outbox ${mb(sizes.outboxBytes)}, inbox ${mb(sizes.inboxBytes)}`);
}

function summary(r: RetentionReport) {
  return {
    rowsDeleted: r.rowsDeleted,
    outboxDeleted: r.outbox.deleted,
    inboxDeleted: r.inbox.deleted,
    parkedDeleted: r.parked ? r.parked.inboxDeleted + r.parked.outboxDeleted : undefined,
    batches: r.batches,
    durationMs: r.durationMs,
    stoppedBy: r.stoppedBy,
    outboxBytesBefore: r.sizeBefore.outboxBytes,
    outboxBytesAfter: r.sizeAfter.outboxBytes,
    inboxBytesBefore: r.sizeBefore.inboxBytes,
    inboxBytesAfter: r.sizeAfter.inboxBytes,
  };
}

function details(r: RetentionReport): string {
  return [
    `**Retention run: ${r.stoppedBy === 'done' ? 'complete' : `stopped (${r.stoppedBy}); the next run continues`}**`,
    '',
    '| | outbox | inbox |',
    '|---|---|---|',
    `| cutoff | ${r.outbox.cutoff} | ${r.inbox.cutoff} |`,
    `| rows deleted | ${r.outbox.deleted} | ${r.inbox.deleted} |`,
    `| batches | ${r.outbox.batches} | ${r.inbox.batches} |`,
    `| size before | ${mb(r.sizeBefore.outboxBytes)} | ${mb(r.sizeBefore.inboxBytes)} |`,
    `| size after | ${mb(r.sizeAfter.outboxBytes)} | ${mb(r.sizeAfter.inboxBytes)} |`,
    ...(r.parked ? ['', `Parked rows older than ${r.parked.cutoff}: ${r.parked.outboxDeleted} outbox, ${r.parked.inboxDeleted} inbox deleted.`] : []),
    '',
    `Duration ${(r.durationMs / 1000).toFixed(1)} s. Space freed by deletes is reused by new rows after vacuum; the file does not shrink.`,
  ].join('\n');
}

function mb(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MB`;
}

// Payload shapes of the retention activities and workflow. Type-only, so the workflow may import it.

export interface RetentionInput {
  /** Published outbox rows older than this go. Missing: the worker's RETENTION_WINDOW_MS. */
  windowMs?: number;
  /** Ids per delete batch. Missing: RETENTION_BATCH_SIZE. */
  batchSize?: number;
  /** Rest between delete batches for the relay's sake; 0 = flat out. Missing: RETENTION_BATCH_PAUSE_MS. */
  batchPauseMs?: number;
  /** One run stops starting new batches after this long. Missing: RETENTION_TIME_BUDGET_MS. */
  timeBudgetMs?: number;
  /** Processed inbox ids older than this are forgotten. Missing: INBOX_RETENTION_MS. */
  inboxHorizonMs?: number;
  /** Parked rows (inbox and outbox) parked longer ago than this are deleted. Missing: PARKED_RETENTION_MS. */
  parkedHorizonMs?: number;
}

export interface RetentionSettings {
  windowMs: number;
  batchSize: number;
  batchPauseMs: number;
  timeBudgetMs: number;
  inboxHorizonMs: number;
  /** Absent in settings settled before parked rows were pruned (older histories). */
  parkedHorizonMs?: number;
}

export interface TableSizes {
  outboxBytes: number;
  outboxEstimatedRows: number;
  inboxBytes: number;
  inboxEstimatedRows: number;
}

export interface RetentionPlan {
  settings: RetentionSettings;
  /** ISO time on the database clock: published_at before it may go. */
  outboxCutoff: string;
  /** The key range to walk; absent when no row can qualify. */
  walk?: { fromId: number; untilId: number };
  sizes: TableSizes;
}

export interface SweepOutboxInput {
  cutoff: string;
  fromId: number;
  untilId: number;
  batchSize: number;
  /** Rest between batches (ms). */
  pauseMs: number;
  /** Epoch ms after which no batch starts (the run's time budget). */
  deadline: number;
}

export interface SweepOutboxResult {
  deleted: number;
  batches: number;
  nextId: number;
  complete: boolean;
  stoppedBy: 'done' | 'time-budget' | 'cancelled';
  /** Set when this attempt resumed an earlier, interrupted one from its heartbeat. */
  resumedFromId?: number;
  /**
   * What the heartbeat this attempt resumed from had already counted (included in deleted and
   * batches). Rows deleted after that heartbeat reached the server and before the crash are gone
   * but uncounted: at most one heartbeat interval of work (see SWEEP_HEARTBEAT_TIMEOUT).
   */
  resumedWith?: { deleted: number; batches: number };
  attempt: number;
  ms: number;
}

export interface PruneInboxInput {
  horizonMs: number;
  batchSize: number;
  deadline: number;
}

export interface PruneInboxResult {
  deleted: number;
  batches: number;
  cutoff: string;
  complete: boolean;
  ms: number;
}

export interface PruneParkedInput {
  horizonMs: number;
  batchSize: number;
  deadline: number;
}

export interface PruneParkedResult {
  cutoff: string;
  inboxDeleted: number;
  outboxDeleted: number;
  complete: boolean;
  ms: number;
}

export interface RetentionReport {
  settings: RetentionSettings;
  outbox: { cutoff: string; deleted: number; batches: number; complete: boolean; resumedFromId?: number; resumedWith?: { deleted: number; batches: number }; attempts: number };
  inbox: { cutoff: string; deleted: number; batches: number; complete: boolean };
  /** Parked rows deleted (absent from runs of workflow code older than this step). */
  parked?: { cutoff: string; inboxDeleted: number; outboxDeleted: number; complete: boolean };
  rowsDeleted: number;
  batches: number;
  stoppedBy: 'done' | 'time-budget' | 'cancelled';
  durationMs: number;
  sizeBefore: TableSizes;
  sizeAfter: TableSizes;
}

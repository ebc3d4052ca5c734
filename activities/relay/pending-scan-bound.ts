import { FROM_THE_BEGINNING } from '../../src/outbox/queries/fetch-pending-ids';

/**
 * Where a shard's poll may start reading the pending index: a lower bound `trusted` such that no
 * row of the shard with `id <= trusted` is pending, or ever will be by an INSERT.
 *
 * Why: every published row leaves a dead entry in outbox_events_pending_idx until vacuum removes
 * it, and vacuum cannot while any session holds an old snapshot. An unbounded poll then walks
 * every dead entry from the start of the index on every call, its cost growing with the dead
 * entries (docs/vacuum.md has the figures). With `id > trusted` it starts past the
 * already-published prefix.
 *
 * Why a high-water mark is not enough: sequence order is not commit order. A transaction may take
 * id 100 (nextval, or an INSERT's default), stay open, and commit after 101…5000 were published.
 * "The last id I published" would skip 100 forever.
 *
 * The argument (PostgreSQL, the outbox_events id sequence with CACHE 1 and a positive increment,
 * checked at run time by read-id-holders):
 *
 *  1. A poll runs with snapshot S and reads the shard's pending ids above `from` (`from` is
 *     `trusted`, or nothing on a full scan). Let L be the lowest pending id it returns, or the
 *     lowest id still being marked (the previous batch: pending until its UPDATE commits). Every
 *     row of the shard visible in S with from < id < L is not pending. Call `ceiling` = L - 1;
 *     when nothing is pending, `ceiling` = the highest id any earlier poll returned.
 *  2. Every id <= ceiling was handed out before S: the row holding `ceiling + 1` (or `ceiling`)
 *     was committed before S, and a CACHE 1 sequence hands out increasing values in real time.
 *  3. Whoever took an id holds a RowExclusiveLock on the sequence from that nextval until its
 *     transaction ends (commit, abort, or COMMIT/ROLLBACK PREPARED; pg_locks shows prepared
 *     transactions too). The set `holders` of transactions holding it is read after the poll, so
 *     at a moment r after S. A transaction that took an id <= ceiling either committed before S
 *     (its row is in S, step 1 covers it), or still holds the lock at r (it is in `holders`), or
 *     ended between S and r.
 *  4. Once none of `holders` holds the lock any more (checked by a later read at moment r'), every
 *     transaction that ever took an id <= ceiling has ended; a snapshot S' taken after r' sees
 *     every row that will ever have such an id. A poll with S' (it starts after r', measured on
 *     this process's monotonic clock, which orders "result received" before "next query sent")
 *     and `from <= trusted` shows the lowest pending id L'. Every row with id <= min(ceiling,
 *     L' - 1) is now not pending, and no new one can appear: that value becomes `trusted`.
 *
 * What the bound cannot see, and the safety net: an UPDATE that makes an old row pending again
 * (an operator setting published_at back to NULL, a redrive of a parked row), an INSERT with an
 * explicit id below the bound, or a sequence reset. So every `fullScanIntervalMs` the poll starts
 * from the beginning; a pending row it finds below `trusted` lowers `trusted` to below it. A
 * redrive asks for that full scan at once (requestFullScan, through the NOTIFY it sends).
 *
 * A held snapshot does not stop the bound from advancing: it holds no sequence lock. Only a
 * transaction that took an id and has not ended does, which is exactly the row the bound must not
 * pass.
 */
export const NO_BOUND = FROM_THE_BEGINNING;

/**
 * How often a shard's polls may read the id holders (pg_locks) to move the bound. At a trickle
 * every poll finds a new ceiling, and reading the holders after each one was a query per batch
 * (docs/relay.md, "Waking only the shards with new rows"); a bound that moves ten times a second
 * leaves a poll at most a tenth of a second's published rows to walk past.
 */
export const HOLDERS_READ_EVERY_MS = 100;

export interface PollPlan {
  /** Read ids above this; NO_BOUND on a full scan. */
  from: number;
  fullScan: boolean;
  /** Monotonic time the poll was sent (performance.now()). */
  startedAt: number;
}

export interface PollOutcome {
  /** The ids the poll returned, ascending. */
  ids: number[];
  /** Ids excluded from the poll because they are being marked published: still pending. */
  excludedIds?: number[];
}

export interface ScanBoundState {
  trusted: number;
  candidate?: { bound: number; holders: ReadonlySet<string>; readyAt?: number };
  highestSeen: number;
  lastFullScanAt: number;
  /** Monotonic time of the last holders read (observeHolders). */
  lastHoldersAt: number;
}

export class PendingScanBound {
  private state: ScanBoundState = { trusted: NO_BOUND, highestSeen: NO_BOUND, lastFullScanAt: Number.NEGATIVE_INFINITY, lastHoldersAt: Number.NEGATIVE_INFINITY };

  /** `holdersEveryMs`: the least time between two holders reads (0: after any poll that can use one). */
  constructor(
    private readonly fullScanIntervalMs: number,
    private readonly holdersEveryMs = 0,
  ) {}

  get snapshot(): Readonly<ScanBoundState> {
    return this.state;
  }

  /** The next poll: from the trusted bound, or from the beginning when the safety net is due. */
  plan(now: number): PollPlan {
    const fullScan = this.state.trusted === NO_BOUND || now - this.state.lastFullScanAt >= this.fullScanIntervalMs;
    if (fullScan) this.state.lastFullScanAt = now;
    return { from: fullScan ? NO_BOUND : this.state.trusted, fullScan, startedAt: now };
  }

  /** Forget the trust; the next poll reads from the beginning (a redrive made old rows pending). */
  requestFullScan(): void {
    this.state.lastFullScanAt = Number.NEGATIVE_INFINITY;
  }

  /**
   * Steps 1 and 4 of the argument, for a finished poll. Returns whether the caller should read
   * the sequence's lock holders (step 3) and pass them to `observeHolders`.
   */
  observePoll(plan: PollPlan, outcome: PollOutcome): { needHolders: boolean; ceiling: number } {
    const s = this.state;
    const lowestPending = Math.min(outcome.ids[0] ?? Infinity, ...(outcome.excludedIds ?? []));
    const ceiling = Number.isFinite(lowestPending) ? lowestPending - 1 : s.highestSeen;

    if (plan.fullScan) {
      // The safety net: a pending row below the bound (made pending again by an UPDATE) pulls
      // the bound down below it. A candidate above it stays: promotion takes min(candidate,
      // ceiling) of a poll that reads from at most the bound, so it cannot pass that row.
      if (ceiling < s.trusted) s.trusted = ceiling;
    }
    if (s.candidate?.readyAt !== undefined && plan.startedAt > s.candidate.readyAt) {
      s.trusted = Math.max(s.trusted, Math.min(s.candidate.bound, ceiling));
      s.candidate = undefined;
    }
    for (const id of outcome.ids) if (id > s.highestSeen) s.highestSeen = id;
    const worthACandidate = ceiling > s.trusted && (s.candidate === undefined || s.candidate.readyAt === undefined);
    const useful = worthACandidate || (s.candidate !== undefined && s.candidate.readyAt === undefined);
    // Skipping a read only delays the bound: every step of the argument holds for the reads made.
    return { needHolders: useful && plan.startedAt - s.lastHoldersAt >= this.holdersEveryMs, ceiling };
  }

  /** The holders were read but the sequence is not ordered (the bound cannot move): read them again only after holdersEveryMs. */
  observeUnorderedSequence(now: number): void {
    this.state.lastHoldersAt = now;
  }

  /**
   * Step 3 (a new candidate) or the check of step 4 (have its holders all ended?). `holders`
   * were read after the poll that produced `ceiling`; `now` is when that read's result arrived.
   */
  observeHolders(ceiling: number, holders: readonly string[], now: number): void {
    const s = this.state;
    s.lastHoldersAt = now;
    if (s.candidate && s.candidate.readyAt === undefined) {
      if (!holders.some((h) => s.candidate!.holders.has(h))) s.candidate.readyAt = now;
      return;
    }
    if (s.candidate === undefined && ceiling > s.trusted) {
      s.candidate = { bound: ceiling, holders: new Set(holders), ...(holders.length === 0 ? { readyAt: now } : {}) };
    }
  }
}

/** One bound per shard of one layout, for the life of a worker process. */
export class PendingScanBounds {
  private readonly byShard = new Map<string, PendingScanBound>();

  constructor(
    private readonly fullScanIntervalMs: number,
    private readonly holdersEveryMs = HOLDERS_READ_EVERY_MS,
  ) {}

  forShard(shardCount: number, shardIndex: number): PendingScanBound {
    const key = `${shardCount}:${shardIndex}`;
    let bound = this.byShard.get(key);
    if (!bound) this.byShard.set(key, (bound = new PendingScanBound(this.fullScanIntervalMs, this.holdersEveryMs)));
    return bound;
  }

  requestFullScan(): void {
    for (const bound of this.byShard.values()) bound.requestFullScan();
  }
}

// Fetching ahead of the commits. kafkajs fetches again only when every batch of its last fetch
// has been handled; a handler that waits for its events to be applied keeps the next fetch
// (decoding, validating) off the time a flight is in the air, and puts an offset commit and a
// fetch round trip on the critical path of every event that arrives meanwhile. So the batch
// handler hands its chunks over and returns, and this ledger does what waiting used to
// guarantee:
//
// - a partition's chunks are applied in offset order: a chunk's apply starts only when the
//   chunk before it on the same partition has settled (order per key holds for the handlers),
//   and the chunks that arrived meanwhile go together in the next apply (up to a batch), so
//   fetching often in small pieces does not mean applying in small pieces;
// - a partition's offset is committed only past chunks that were applied, in order, so the
//   committed offset never passes an event whose effect is not durable;
// - a new group generation (a rebalance) forgets what the old one had pending: the old flights
//   finish (harmless, the inbox drops the redelivered copies), but only the new generation's
//   chunks commit, starting from the offset the group has committed;
// - at most `limit` events wait between being fetched and committed (the handler waits for
//   room), so memory stays bounded however far Kafka is ahead.

export interface PartitionOffset {
  topic: string;
  partition: number;
  /** The next offset to read: the last applied offset + 1, as Kafka's commit wants it. */
  offset: string;
}

/** Sends offsets to the group coordinator; a failure is retried with the next commit or the retry timer. */
export type CommitOffsets = (offsets: PartitionOffset[]) => Promise<void>;

export interface HandedOverChunk<T> {
  topic: string;
  partition: number;
  lastOffset: string;
  /** Events the chunk holds until it is committed (counted against the limit and the apply size). */
  events: number;
  /** What the apply function gets for this chunk. */
  item: T;
}

/**
 * Applies the consecutive chunks of one partition that were waiting, together; resolves true once
 * their effect is durable, false when it gave up (partition lost, stopping).
 */
export type ApplyChunks<T> = (items: T[]) => Promise<boolean>;

interface Waiting<T> {
  chunk: HandedOverChunk<T>;
  settle: (applied: boolean) => void;
}

interface PartitionLine<T> {
  applying: boolean;
  waiting: Waiting<T>[];
}

const COMMIT_RETRY_MS = 1_000;

export class OrderedCommits<T> {
  private generationNumber = 0;
  private lines = new Map<string, PartitionLine<T>>();
  private pending = new Set<Promise<boolean>>();
  private heldEvents = 0;
  private toCommit = new Map<string, PartitionOffset>();
  private committing: Promise<void> | undefined;
  private commitAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private roomWaiters: (() => void)[] = [];
  private takingChunks = true;

  constructor(
    private readonly opts: {
      apply: ApplyChunks<T>;
      /** At most this many events per apply (at least one chunk, however large). */
      maxEventsPerApply: number;
      commitOffsets: CommitOffsets;
      onCommitFailed: (err: unknown, offsets: PartitionOffset[]) => void;
    },
  ) {}

  get generation(): number {
    return this.generationNumber;
  }

  /** Whether new chunks are accepted (false once draining for a stop). */
  get taking(): boolean {
    return this.takingChunks;
  }

  /** Events handed over and not yet committed (or given up) in the current generation. */
  get held(): number {
    return this.heldEvents;
  }

  /** The group assigned partitions anew: what the previous generation had pending is not ours to commit. */
  newGeneration(): void {
    this.generationNumber += 1;
    const lines = [...this.lines.values()];
    this.lines.clear();
    this.toCommit.clear();
    this.heldEvents = 0;
    // Chunks that had not started are given up; the new generation reads them again.
    for (const line of lines) for (const w of line.waiting.splice(0)) w.settle(false);
    this.wakeRoomWaiters();
  }

  /**
   * Queues a chunk behind the earlier chunks of its partition. Resolves with whether it was
   * applied; its offset is committed (asynchronously, in order) when it was. Chunks that wait
   * while the partition's previous apply runs are applied together when it ends (one apply of
   * many small fetches' chunks, not one each).
   */
  add(chunk: HandedOverChunk<T>): Promise<boolean> {
    const key = lineKey(chunk.topic, chunk.partition);
    let line = this.lines.get(key);
    if (!line) this.lines.set(key, (line = { applying: false, waiting: [] }));
    this.heldEvents += chunk.events;
    const settled = new Promise<boolean>((settle) => line.waiting.push({ chunk, settle }));
    this.pending.add(settled);
    void settled.finally(() => this.pending.delete(settled));
    this.applyNext(key, line);
    return settled;
  }

  private applyNext(key: string, line: PartitionLine<T>): void {
    if (line.applying || line.waiting.length === 0) return;
    if (!this.takingChunks) {
      for (const w of line.waiting.splice(0)) this.release(w, false);
      return;
    }
    const run: Waiting<T>[] = [line.waiting.shift()!];
    let events = run[0]!.chunk.events;
    while (line.waiting.length > 0 && events + line.waiting[0]!.chunk.events <= this.opts.maxEventsPerApply) {
      const next = line.waiting.shift()!;
      run.push(next);
      events += next.chunk.events;
    }
    line.applying = true;
    const generation = this.generationNumber;
    void this.opts
      .apply(run.map((w) => w.chunk.item))
      .catch(() => false)
      .then((applied) => {
        if (generation !== this.generationNumber) {
          for (const w of run) w.settle(false);
          return;
        }
        line.applying = false;
        if (applied) {
          const last = run[run.length - 1]!.chunk;
          this.toCommit.set(key, { topic: last.topic, partition: last.partition, offset: (BigInt(last.lastOffset) + 1n).toString() });
          this.commit();
          for (const w of run) this.release(w, true);
          this.applyNext(key, line);
        } else {
          // A chunk after one that was given up would leave a gap below it: give them all up
          // (the next owner of the partition, or the next generation, starts from the committed offset).
          for (const w of [...run, ...line.waiting.splice(0)]) this.release(w, false);
        }
      });
  }

  private release(w: Waiting<T>, applied: boolean): void {
    this.heldEvents -= w.chunk.events;
    w.settle(applied);
    this.wakeRoomWaiters();
  }

  /** Resolves when fewer than `limit` events are held, the generation changes or chunks are no longer taken. */
  async waitForRoom(limit: number): Promise<void> {
    const generation = this.generationNumber;
    while (this.heldEvents >= limit && generation === this.generationNumber && this.takingChunks) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
  }

  /** Commits what is applied now and resolves when that commit (and any queued before it) is done. */
  async flush(): Promise<void> {
    this.commit();
    while (this.committing) await this.committing;
  }

  /**
   * For a graceful stop: takes no new chunks, lets the ones already applying finish (a chunk still
   * waiting behind its partition's earlier one gives itself up, via `taking`), commits, and
   * resolves when done or after `timeoutMs`.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.takingChunks = false;
    for (const [key, line] of this.lines) this.applyNext(key, line);
    this.wakeRoomWaiters();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    try {
      await Promise.race([Promise.allSettled([...this.pending]).then(() => this.flush()), timeout]);
    } finally {
      clearTimeout(timer);
      clearTimeout(this.retryTimer);
    }
  }

  private wakeRoomWaiters(): void {
    const waiters = this.roomWaiters;
    this.roomWaiters = [];
    for (const wake of waiters) wake();
  }

  /** One commit at a time, so a partition's committed offset only moves forward. */
  private commit(): void {
    if (this.committing) {
      this.commitAgain = true;
      return;
    }
    this.committing = (async () => {
      do {
        this.commitAgain = false;
        if (this.toCommit.size === 0) break;
        const offsets = [...this.toCommit.values()];
        const generation = this.generationNumber;
        this.toCommit.clear();
        try {
          await this.opts.commitOffsets(offsets);
        } catch (err) {
          this.opts.onCommitFailed(err, offsets);
          if (generation !== this.generationNumber) break;
          // Put back what no later offset superseded meanwhile, and try again shortly: an idle
          // partition would otherwise keep its last applied chunk uncommitted until more arrives.
          for (const o of offsets) {
            const key = lineKey(o.topic, o.partition);
            if (!this.toCommit.has(key)) this.toCommit.set(key, o);
          }
          this.retryTimer ??= setTimeout(() => {
            this.retryTimer = undefined;
            this.commit();
          }, COMMIT_RETRY_MS);
          break;
        }
      } while (this.commitAgain || this.toCommit.size > 0);
    })().finally(() => {
      this.committing = undefined;
    });
  }
}

function lineKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

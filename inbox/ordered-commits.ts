// Fetching ahead of the commits. kafkajs fetches again only when every batch of its last fetch
// has been handled; a handler that waits for its events to be applied keeps the next fetch
// (decoding, validating) off the time a flight is in the air, and puts an offset commit and a
// fetch round trip on the critical path of every event that arrives meanwhile. So the batch
// handler hands its chunks over and returns, and this ledger does what waiting used to
// guarantee:
//
// - a partition's chunks are applied in offset order: a chunk's apply starts only when the
//   chunk before it on the same partition has settled (order per key holds for the handlers);
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

export interface HandedOverChunk {
  topic: string;
  partition: number;
  lastOffset: string;
  /** Events the chunk holds until it is committed (counted against the limit). */
  events: number;
  /** Applies the chunk; resolves true once its effect is durable, false when it gave up (partition lost, stopping). */
  apply: () => Promise<boolean>;
}

const COMMIT_RETRY_MS = 1_000;

export class OrderedCommits {
  private generationNumber = 0;
  private tails = new Map<string, Promise<boolean>>();
  private pending = new Set<Promise<unknown>>();
  private heldEvents = 0;
  private toCommit = new Map<string, PartitionOffset>();
  private committing: Promise<void> | undefined;
  private commitAgain = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private roomWaiters: (() => void)[] = [];
  private takingChunks = true;

  constructor(
    private readonly commitOffsets: CommitOffsets,
    private readonly onCommitFailed: (err: unknown, offsets: PartitionOffset[]) => void,
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
    this.tails.clear();
    this.toCommit.clear();
    this.heldEvents = 0;
    this.wakeRoomWaiters();
  }

  /**
   * Registers a chunk behind the earlier chunks of its partition. Resolves with whether it was
   * applied; its offset is committed (asynchronously, in order) when it was.
   */
  add(chunk: HandedOverChunk): Promise<boolean> {
    const key = `${chunk.topic}\u0000${chunk.partition}`;
    const generation = this.generationNumber;
    this.heldEvents += chunk.events;
    const previous = this.tails.get(key) ?? Promise.resolve(true);
    const settled = previous.then(async (previousApplied) => {
      // A chunk after one that was given up would leave a gap below it: give it up too (the
      // next owner of the partition, or the next generation, starts from the committed offset).
      // So is one that had not started when a stop began draining.
      const applied = previousApplied && generation === this.generationNumber && this.takingChunks && (await chunk.apply());
      if (generation !== this.generationNumber) return false;
      this.heldEvents -= chunk.events;
      if (applied) {
        this.toCommit.set(key, { topic: chunk.topic, partition: chunk.partition, offset: (BigInt(chunk.lastOffset) + 1n).toString() });
        this.commit();
      }
      this.wakeRoomWaiters();
      return applied;
    });
    this.tails.set(key, settled);
    this.pending.add(settled);
    void settled.finally(() => this.pending.delete(settled));
    return settled;
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
          await this.commitOffsets(offsets);
        } catch (err) {
          this.onCommitFailed(err, offsets);
          if (generation !== this.generationNumber) break;
          // Put back what no later offset superseded meanwhile, and try again shortly: an idle
          // partition would otherwise keep its last applied chunk uncommitted until more arrives.
          for (const o of offsets) {
            const key = `${o.topic}\u0000${o.partition}`;
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

// The consumer lets kafkajs fetch a partition's next messages while the chunks it handed out are
// still being applied (docs/consumer.md, "Fetching ahead"). Two rules keep that safe:
//
// - a partition's chunks are applied one after another, in offset order: a handler sees a
//   partition's events in the order they were written (two chunks of one partition never ride
//   concurrent workflows, and a retried chunk is never overtaken by the next one);
// - a partition's offset is committed past a chunk only once that chunk and every one before it
//   are applied, and commits are sent in order.
//
// This keeps, per partition, the chain of chunks handed out. Once a chunk is abandoned (the
// partition is no longer ours, the consumer stops before it started), nothing after it in that
// generation is applied or committed; the next owner starts from the last committed offset.
// Different partitions never wait for each other.

interface Chain {
  /** The consumer group generation the chain belongs to: a rejoin starts a new one. */
  generation: number;
  /** Settles true once every chunk so far is applied, false once one was abandoned. */
  applied: Promise<boolean>;
  /** Settles true once every chunk so far is applied and had its commit sent, false once one was abandoned. */
  committed: Promise<boolean>;
}

const SETTLED: Omit<Chain, 'generation'> = { applied: Promise.resolve(true), committed: Promise.resolve(true) };

export class PartitionSequence {
  private readonly chains = new Map<string, Chain>();

  /** Settles once the partition's chunks handed out so far are applied (true) or one was abandoned (false); their commits may still be on their way. */
  applied(partitionKey: string, generation: number): Promise<boolean> {
    return this.last(partitionKey, generation).applied;
  }

  /** Settles once the partition's chunks handed out so far are applied and committed (true) or one was abandoned (false). */
  committed(partitionKey: string, generation: number): Promise<boolean> {
    return this.last(partitionKey, generation).committed;
  }

  /**
   * Appends a chunk: `apply` starts once every earlier chunk of the partition is applied, and
   * gives what to commit (undefined: abandoned); `commit` runs once the chunk is applied and every
   * earlier chunk's commit was sent. A commit that fails is the caller's to log: the chunk is
   * applied all the same, and the next commit covers it.
   */
  add<T>(partitionKey: string, generation: number, apply: () => Promise<T | undefined>, commit: (outcome: T) => Promise<void>): Promise<boolean> {
    const before = this.last(partitionKey, generation);
    const outcome = before.applied.then((earlierApplied) => (earlierApplied ? apply() : undefined));
    const applied = outcome.then((o) => o !== undefined);
    const committed = Promise.all([before.committed, outcome]).then(async ([earlierCommitted, o]) => {
      if (!earlierCommitted || o === undefined) return false;
      await commit(o);
      return true;
    });
    this.chains.set(partitionKey, { generation, applied, committed });
    void committed.then((ok) => {
      // A finished chain is forgotten so that the map does not keep every partition ever
      // owned; an abandoned one stays, so that nothing after it runs in this generation.
      if (ok && this.chains.get(partitionKey)?.committed === committed) this.chains.delete(partitionKey);
    });
    return committed;
  }

  /** Settles once every chain settled, including chains added while waiting (a stop drains with this). */
  async drain(): Promise<void> {
    for (;;) {
      const chains = [...this.chains.values()];
      await Promise.all(chains.map((c) => c.committed));
      if ([...this.chains.values()].every((c) => chains.includes(c))) return;
    }
  }

  private last(partitionKey: string, generation: number): Omit<Chain, 'generation'> {
    const chain = this.chains.get(partitionKey);
    return chain && chain.generation === generation ? chain : SETTLED;
  }
}

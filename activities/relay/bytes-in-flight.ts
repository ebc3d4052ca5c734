/**
 * Row bodies a relay worker process holds at once, over all its shards. Each batch is already
 * bounded (RELAY_BATCH_MAX_BYTES), but a worker running 8 shards' sessions could otherwise hold
 * 8 such batches, plus their Kafka encodings, under a 256 MB heap cap. A batch waits here until
 * its bodies fit; one that is over the limit alone goes when nothing else is in flight, so no
 * batch waits forever. Small events never wait: 8 batches of 2,000 rows of 150 bytes are 2.4 MB.
 */
export class BytesInFlight {
  private used = 0;
  private waiters: (() => void)[] = [];

  constructor(readonly limit: number) {}

  get inFlight(): number {
    return this.used;
  }

  /** Resolves once `bytes` fit; call the returned function (once) when they are released. */
  async acquire(bytes: number): Promise<() => void> {
    while (this.used > 0 && this.used + bytes > this.limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
    this.used += bytes;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.used -= bytes;
      for (const wake of this.waiters.splice(0)) wake();
    };
  }
}

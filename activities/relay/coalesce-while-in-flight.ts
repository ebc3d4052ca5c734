/**
 * Group commit for one kind of round trip: a call made while another call of its kind is in
 * flight waits for it and then leaves together with every call that gathered meanwhile, as one
 * round trip. A call with nothing in flight leaves at the end of the current turn of the event
 * loop, with whatever else was called in that turn (shards whose replies arrived together): a
 * lone call waits for no other round trip.
 *
 * Why: at a trickle the relay's shards of one process wake on the same notification, each with
 * a batch of one or two rows, and each paid its own statements and Kafka request; on these
 * machines a round trip costs more CPU (the socket write and its loopback delivery, the server's
 * side) than the rows it carries. Only small calls gather, up to `maxWeight` together; a call of
 * `smallWeight` or more goes on its own, concurrently as before, so full batches under load keep
 * their parallelism. (DataLoader batches per tick and per key, a promise per row; here a call is
 * already a batch, and the gathering window is the flight in progress.)
 */
export class CoalesceWhileInFlight<In, Out> {
  private queue: { input: In; weight: number; resolve: (out: Out) => void; reject: (err: unknown) => void }[] = [];
  private flying = false;

  constructor(
    /** Runs the gathered inputs as one round trip: one output per input, in order. */
    private readonly runTogether: (inputs: In[]) => Promise<Out[]>,
    /** Runs one input alone: a large call, or a call that gathered nothing. */
    private readonly runAlone: (input: In) => Promise<Out>,
    private readonly limits: { weight: (input: In) => number; smallWeight: number; maxWeight: number },
  ) {}

  call(input: In): Promise<Out> {
    const weight = this.limits.weight(input);
    if (weight >= this.limits.smallWeight) return this.runAlone(input);
    return new Promise<Out>((resolve, reject) => {
      this.queue.push({ input, weight, resolve, reject });
      // The first call of a gathering leaves once this turn's I/O callbacks have run.
      if (this.queue.length === 1 && !this.flying) setImmediate(() => this.leave());
    });
  }

  private leave(): void {
    if (this.flying || this.queue.length === 0) return;
    let weight = 0;
    let count = 0;
    while (count < this.queue.length && (count === 0 || weight + this.queue[count]!.weight <= this.limits.maxWeight)) weight += this.queue[count++]!.weight;
    const calls = this.queue.splice(0, count);
    this.flying = true;
    const flight = calls.length === 1 ? this.runAlone(calls[0]!.input).then((out) => [out]) : this.runTogether(calls.map((c) => c.input));
    flight
      .then(
        (outs) => calls.forEach((c, i) => c.resolve(outs[i]!)),
        // A failed round trip fails every call it carried; each caller retries as it would alone.
        (err: unknown) => calls.forEach((c) => c.reject(err)),
      )
      .finally(() => {
        this.flying = false;
        this.leave();
      });
  }
}

/**
 * The one batch a session is marking published while it polls and sends the next (at most one
 * mark in flight; polls skip its ids).
 */
export class MarkInFlight {
  private marking: { ids: number[]; done: Promise<void> } | undefined;

  /** The ids being marked (none: nothing in flight). */
  get ids(): number[] {
    return this.marking?.ids ?? [];
  }

  start(ids: number[], done: Promise<void>): void {
    // The mark is awaited only at `finish`, after the next batch's poll and send: a mark that
    // fails before then would be a rejection nobody handles yet, which ends the worker process
    // (Node's default). Noted here; `finish` still sees the failure and ends the session with it.
    done.catch(() => undefined);
    this.marking = { ids, done };
  }

  /** Waits for the mark in flight, if any; nothing is in flight after it. */
  async finish(): Promise<void> {
    const m = this.marking;
    this.marking = undefined;
    await m?.done;
  }
}

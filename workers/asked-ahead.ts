/**
 * "Can another worker take over?", asked while a link starts failing rather than once it is
 * reported down, so a step-aside does not wait for the answer: the question usually travels over
 * a link that works, but it takes a round trip, and over one that does not it would take its
 * whole bound, after the health check already took its own (docs/guarantees.md#stepping-aside).
 * Each question is bounded by `timeoutMs` and counts as "yes" when it fails or times out: a worker
 * that cannot tell steps aside, as it would with nobody to ask.
 */
export class AskedAhead {
  private answer: boolean | undefined;
  private pending: Promise<boolean> | undefined;

  constructor(
    private readonly ask: (failing: readonly string[]) => Promise<boolean>,
    private readonly timeoutMs: number,
  ) {}

  /** After a probe round: a failed one asks (again, unless a question is out); a clean one forgets the answer. */
  round(failing: readonly string[]): void {
    if (failing.length === 0) this.answer = undefined;
    else void this.question(failing);
  }

  /** The latest answer of this run of failed rounds, or a question asked now (within its bound). */
  async othersCanTakeOver(failing: readonly string[]): Promise<boolean> {
    return this.answer ?? (await this.question(failing));
  }

  private question(failing: readonly string[]): Promise<boolean> {
    if (this.pending) return this.pending;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), this.timeoutMs)));
    const asked = Promise.race([this.ask(failing).catch(() => true), late]).then((answer) => {
      clearTimeout(timer);
      this.answer = answer;
      this.pending = undefined;
      return answer;
    });
    this.pending = asked;
    return asked;
  }
}

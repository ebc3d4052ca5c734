/**
 * How long a worker's links have answered every health check, from the watch's rounds
 * (workers/link-health.ts): null from the first failed round until a round answers in full again.
 * A relay worker writes it with each lease renewal (links_ok_since), so a shard that stopped
 * trusting the worker can tell when it is healthy again (src/outbox/relay-avoidance.ts).
 */
export class LinkStreak {
  // performance.now() of the first round of the current run of clean ones; the worker starts healthy.
  private okSince: number | null = performance.now();

  round(failing: readonly string[]): void {
    if (failing.length > 0) this.okSince = null;
    else this.okSince ??= performance.now();
  }

  /**
   * A link failed outside the health check (a connection of the worker's own presumed dead): the
   * streak starts again at the next round that answers in full, as after a failed round.
   */
  broke(): void {
    this.okSince = null;
  }

  okForMs(): number | null {
    return this.okSince === null ? null : performance.now() - this.okSince;
  }
}

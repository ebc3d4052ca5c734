/**
 * Counts the duplicates the consumer absorbed (a redelivered event whose inbox row was already
 * there) across worker restarts: each consumer process serves its own counter, which starts from
 * zero when the process does, so the soak samples it every second and keeps the last value seen
 * from each process. What a process absorbed in its last second before a kill -9 is not seen,
 * so the figure is a lower bound.
 */
export class AbsorbedDuplicates {
  private readonly lastByProcess = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly metricsUrl: string) {}

  start(everyMs = 1000) {
    this.timer = setInterval(() => void this.sample(), everyMs);
  }

  async stop(): Promise<number> {
    clearInterval(this.timer);
    await this.sample();
    return this.total();
  }

  total(): number {
    return [...this.lastByProcess.values()].reduce((a, b) => a + b, 0);
  }

  private async sample() {
    try {
      const text = await (await fetch(this.metricsUrl, { signal: AbortSignal.timeout(800) })).text();
      // prom-client's default process metrics name the process by its start time.
      const started = /^process_start_time_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1];
      if (started === undefined) return;
      const absorbed = [...text.matchAll(/^inbox_duplicates_absorbed_total(?:\{[^}]*\})? (\S+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
      this.lastByProcess.set(started, absorbed);
    } catch {
      // Between a kill and the restart there is nobody to ask.
    }
  }
}

/** One event of a latency run: when its commit returned, and how long until it was on Kafka. */
export interface TimedEvent {
  committed: number;
  ms: number;
}

/** A stretch of a run in which events at or over the threshold were committed close together. */
export interface TailEpisode {
  /** When the episode's first slow event was committed, in ms from the run's start. */
  atMs: number;
  events: number;
  maxMs: number;
}

/**
 * Where a run's tail comes from in time: its slow events (at or over `thresholdMs`, the run's p99)
 * grouped into episodes of commits less than `gapMs` apart. Episodes at a regular spacing point at
 * something periodic (a timer in a worker, a checkpoint); one episode at the start points at the
 * run's warm-up; slow events spread evenly point at no single moment.
 */
export function tailEpisodes(events: readonly TimedEvent[], startMs: number, thresholdMs: number, gapMs = 200): TailEpisode[] {
  const slow = events.filter((e) => e.ms >= thresholdMs).sort((a, b) => a.committed - b.committed);
  const episodes: TailEpisode[] = [];
  let lastCommitted = -Infinity;
  for (const e of slow) {
    const current = episodes.at(-1);
    if (current && e.committed - lastCommitted < gapMs) {
      current.events += 1;
      current.maxMs = Math.max(current.maxMs, e.ms);
    } else {
      episodes.push({ atMs: e.committed - startMs, events: 1, maxMs: e.ms });
    }
    lastCommitted = e.committed;
  }
  return episodes;
}

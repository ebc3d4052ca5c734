// The model on paper behind docs/scaling.md: from measured CPU-seconds per event per component to
// events/s per core for each, and a predicted throughput for a machine with more cores. Pure, so
// a unit test pins its arithmetic; the inputs are the scaling benchmark's measurements.
//
// Assumptions (stated in the doc): the cores are split between the components in proportion to
// what each needs per event, so that all of them saturate together; a component that cannot use
// more than a few cores (`maxCores`) gets at most that, and once its share would exceed it, it is
// the limit; nothing else (network, disk, lock waits) limits before CPU does.

export interface ComponentCost {
  /** CPU-seconds per event, in microseconds (measured). */
  cpuMicrosPerEvent: number;
  /** Most cores this component can use (a single writer: 1; one core per relay shard); undefined = as many as it gets. */
  maxCores?: number;
}

export interface Prediction {
  cores: number;
  eventsPerSecond: number;
  /** What stops it: 'CPU (every component)' when the proportional split binds, else the serial component. */
  limitedBy: string;
  /** Cores each component uses at that throughput. */
  coresUsed: Record<string, number>;
}

/** Events per second that one core of each component sustains; null when its cost was below what /proc resolves (10 ms per run). */
export function eventsPerSecondPerCore(costs: Record<string, ComponentCost>): Record<string, number | null> {
  return Object.fromEntries(Object.entries(costs).map(([name, c]) => [name, c.cpuMicrosPerEvent > 0 ? Math.round(1e6 / c.cpuMicrosPerEvent) : null]));
}

/** Throughput on `cores` cores: the lower of the proportional-split bound and every serial component's own bound. */
export function predictThroughput(costs: Record<string, ComponentCost>, cores: number): Prediction {
  const totalMicros = Object.values(costs).reduce((sum, c) => sum + c.cpuMicrosPerEvent, 0);
  let eventsPerSecond = (cores * 1e6) / totalMicros;
  let limitedBy = 'CPU (every component)';
  for (const [name, c] of Object.entries(costs)) {
    if (c.maxCores === undefined || c.cpuMicrosPerEvent <= 0) continue;
    const bound = (c.maxCores * 1e6) / c.cpuMicrosPerEvent;
    if (bound < eventsPerSecond) {
      eventsPerSecond = bound;
      limitedBy = `${name} (at most ${c.maxCores} core${c.maxCores === 1 ? '' : 's'})`;
    }
  }
  const coresUsed = Object.fromEntries(Object.entries(costs).map(([name, c]) => [name, +((eventsPerSecond * c.cpuMicrosPerEvent) / 1e6).toFixed(2)]));
  return { cores, eventsPerSecond: Math.round(eventsPerSecond), limitedBy, coresUsed };
}

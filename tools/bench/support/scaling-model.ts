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

/** Cores `costs` need together for `eventsPerSecond`, each component's share; or why no number of cores reaches it (a serial component's own bound). */
export function coresFor(costs: Record<string, ComponentCost>, eventsPerSecond: number): { cores: number; coresUsed: Record<string, number> } | { unreachable: string } {
  for (const [name, c] of Object.entries(costs)) {
    if (c.maxCores !== undefined && c.cpuMicrosPerEvent > 0 && (c.maxCores * 1e6) / c.cpuMicrosPerEvent < eventsPerSecond) {
      return { unreachable: `${name} (at most ${c.maxCores} core${c.maxCores === 1 ? '' : 's'}: ${Math.round((c.maxCores * 1e6) / c.cpuMicrosPerEvent)}/s)` };
    }
  }
  const coresUsed = Object.fromEntries(Object.entries(costs).map(([name, c]) => [name, +((eventsPerSecond * c.cpuMicrosPerEvent) / 1e6).toFixed(2)]));
  return { cores: +Object.values(coresUsed).reduce((a, b) => a + b, 0).toFixed(1), coresUsed };
}

/** What the model needs of one benchmark run: its CPU per event per process group, in microseconds. */
export interface MeasuredRun {
  cpuMicrosPerEvent: Record<string, number>;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.ceil(sorted.length / 2) - 1]! : NaN;
}

/** The workers' own bound: each unit of spread (a relay shard, a consumed partition) runs in one worker's main thread, so at most one core each. */
export interface WorkerBound {
  label: string;
  maxCores: number;
  unit: string;
}

/**
 * The model from a capped-scaling benchmark's runs: median CPU per event per component over every
 * run, events/s per core for each, and predictions for `coreCounts` cores in two layouts —
 * everything on one machine, and the workers on machines of their own (the scale-out they are
 * built for) with PostgreSQL, Kafka and Temporal on the N cores. PostgreSQL's WAL writer is split
 * out of PostgreSQL's figure because it is one process; the workers use at most one core per unit
 * of spread (`worker`); the Temporal dev server keeps its state in one SQLite file with a single
 * writer, taken as one core.
 */
export function modelFromRuns(runs: MeasuredRun[], worker: WorkerBound, coreCounts: number[], targetEventsPerSecond?: number) {
  const med = (group: string) => median(runs.map((r) => r.cpuMicrosPerEvent[group] ?? 0));
  const walWriter = med('postgres walwriter');
  const services: Record<string, ComponentCost> = {
    // The benchmark's own writes are in this figure: the cost of the events' whole life in PostgreSQL.
    'postgres (without the WAL writer)': { cpuMicrosPerEvent: +(med('postgres') - walWriter).toFixed(2) },
    'postgres WAL writer': { cpuMicrosPerEvent: walWriter, maxCores: 1 },
    kafka: { cpuMicrosPerEvent: med('kafka') },
    temporal: { cpuMicrosPerEvent: med('temporal'), maxCores: 1 },
  };
  const workerCost: ComponentCost = { cpuMicrosPerEvent: med(worker.label), maxCores: worker.maxCores };
  const all = { [worker.label]: workerCost, ...services };
  const workersElsewhere = coreCounts.map((cores) => {
    const p = predictThroughput(services, cores);
    const workerBound = (worker.maxCores * 1e6) / workerCost.cpuMicrosPerEvent;
    const limited = workerBound < p.eventsPerSecond ? { eventsPerSecond: Math.round(workerBound), limitedBy: `${worker.label} (${worker.maxCores} ${worker.unit}, one core each)` } : {};
    const eventsPerSecond = limited.eventsPerSecond ?? p.eventsPerSecond;
    return { ...p, ...limited, workerCoresElsewhere: +((eventsPerSecond * workerCost.cpuMicrosPerEvent) / 1e6).toFixed(2) };
  });
  return {
    inputsCpuMicrosPerEvent: Object.fromEntries(Object.entries(all).map(([k, c]) => [k, c.cpuMicrosPerEvent])),
    eventsPerSecondPerCore: eventsPerSecondPerCore(all),
    oneMachine: coreCounts.map((cores) => predictThroughput(all, cores)),
    workersElsewhere,
    // The cores a target rate takes: everything on one machine, or the services apart from the workers.
    ...(targetEventsPerSecond === undefined
      ? {}
      : { target: { eventsPerSecond: targetEventsPerSecond, oneMachine: coresFor(all, targetEventsPerSecond), services: coresFor(services, targetEventsPerSecond), workers: coresFor({ [worker.label]: workerCost }, targetEventsPerSecond) } }),
  };
}

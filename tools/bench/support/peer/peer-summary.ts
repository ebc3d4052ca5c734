import { median } from '../report';

/** One measured run of one contender (our relay or one of the peer's listeners). */
export interface ContenderRun {
  contender: string;
  repeat: number;
  test: 'throughput' | 'latency';
  events: number;
  /** How many of them were processed (throughput) or arrived (latency) before the run ended. */
  processed: number;
  seconds?: number;
  eventsPerSecond?: number;
  cpu?: { wallSeconds: number; cpuSeconds: Record<string, number>; coresBusy: number; cores: number };
  offeredPerSecond?: number;
  p50Ms?: number;
  p90Ms?: number;
  p99Ms?: number;
  maxMs?: number;
  /** Peer only: error-level lines its listener logged while running. */
  listenerErrors?: number;
  loadAverage1m: number;
}

/**
 * CPU groups that belong to each system under test (measureCpu's labels): ours is the worker,
 * PostgreSQL, Kafka and Temporal; the peer's is its listener process and PostgreSQL (Kafka and
 * Temporal are not in its path, and what they spend meanwhile is other work on the machine).
 */
const OUR_GROUPS = ['worker', 'postgres', 'kafka', 'temporal'];
const PEER_GROUPS = ['worker', 'postgres'];

const micros = (seconds: number, events: number) => Math.round((seconds * 1e6) / events);

/**
 * Medians per contender, and ratios of ours against the peer's best on each figure separately
 * (its highest throughput, its lowest p50, its lowest p99, its lowest CPU per event: the
 * strictest comparison). Ratios > 1 favour ours.
 */
export function summarisePeerRuns(runs: ContenderRun[], ours: string) {
  const names = [...new Set(runs.map((r) => r.contender))];
  const contenders = names.map((contender) => {
    const of = (test: ContenderRun['test']) => runs.filter((r) => r.contender === contender && r.test === test);
    const throughput = of('throughput');
    const latency = of('latency');
    const perGroup = (group: string) => median(throughput.map((r) => micros(r.cpu?.cpuSeconds[group] ?? 0, r.processed || 1)));
    const byGroup = Object.fromEntries((contender === ours ? OUR_GROUPS : PEER_GROUPS).map((g) => [g, perGroup(g)]).filter(([, us]) => (us as number) > 0)) as Record<string, number>;
    return {
      contender,
      eventsPerSecond: median(throughput.map((r) => r.eventsPerSecond!)),
      eventsPerSecondRuns: throughput.map((r) => r.eventsPerSecond!),
      allProcessed: throughput.every((r) => r.processed === r.events),
      p50Ms: median(latency.map((r) => r.p50Ms!)),
      p99Ms: median(latency.map((r) => r.p99Ms!)),
      p99MsRuns: latency.map((r) => r.p99Ms!),
      latencyAllArrived: latency.every((r) => r.processed === r.events),
      cpuMicrosPerEventByGroup: byGroup,
      cpuMicrosPerEvent: {
        worker: byGroup.worker ?? 0,
        workerAndPostgres: (byGroup.worker ?? 0) + (byGroup.postgres ?? 0),
        all: Object.values(byGroup).reduce((a, b) => a + b, 0),
      },
    };
  });
  const us = contenders.find((c) => c.contender === ours);
  const peers = contenders.filter((c) => c.contender !== ours);
  if (!us || peers.length === 0) return { contenders, ratios: undefined };
  const best = <K extends 'eventsPerSecond' | 'p50Ms' | 'p99Ms'>(key: K, highest: boolean) => [...peers].sort((a, b) => (highest ? b[key] - a[key] : a[key] - b[key]))[0]!;
  const bestThroughput = best('eventsPerSecond', true);
  const bestP50 = best('p50Ms', false);
  const bestP99 = best('p99Ms', false);
  const bestCpu = [...peers].sort((a, b) => a.cpuMicrosPerEvent.workerAndPostgres - b.cpuMicrosPerEvent.workerAndPostgres)[0]!;
  const ratio = (a: number, b: number) => +(a / b).toFixed(2);
  return {
    contenders,
    peerBest: { throughput: bestThroughput.contender, p50: bestP50.contender, p99: bestP99.contender, cpu: bestCpu.contender },
    ratios: {
      /** ours ÷ the peer's best (goal ≥ 10). */
      throughput: ratio(us.eventsPerSecond, bestThroughput.eventsPerSecond),
      /** the peer's best ÷ ours: how many times lower ours is. */
      p50: ratio(bestP50.p50Ms, us.p50Ms),
      p99: ratio(bestP99.p99Ms, us.p99Ms),
      cpuWorkerAndPostgres: ratio(bestCpu.cpuMicrosPerEvent.workerAndPostgres, us.cpuMicrosPerEvent.workerAndPostgres),
    },
  };
}

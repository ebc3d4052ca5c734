import os from 'node:os';
import type { TopLevelSpec } from 'vega-lite';
import { CpuCapUnavailable, createCappedGroup, openCpuController, processCpuSeconds, type CappedGroup, type CpuController } from './cpu-cap';
import { median } from './report';

// What the two capped-worker benchmarks share (bench:scaling for relay workers, bench:consumer-scaling
// for consumer workers): the interleaved order of worker counts, each worker's CPU against its cap,
// the curve of medians with its ratios, and its chart. Each benchmark keeps how it loads its
// workers and what bounds their spread (shards or partitions).

/** A worker may exceed its quota by CFS's accounting slack and /proc's 10 ms ticks, not by more. */
const CAP_TOLERANCE = 1.1;

export const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));

/** 1, 2, 3 then 3, 2, 1, alternating, so drift over the run hits every worker count alike. */
export function interleavedOrder(repeats: number): number[] {
  return Array.from({ length: repeats }, (_, r) => (r % 2 === 0 ? [1, 2, 3] : [3, 2, 1])).flat();
}

export interface CappedProcess {
  pid: number;
  group: CappedGroup;
}

/** One worker's use of its cap over a timed run. */
export interface CapUse {
  pid: number;
  cpuSeconds: number;
  cpuPerWallSecond: number;
  /** Share of the cgroup's scheduler periods in which the worker hit its quota. */
  throttledShare: number;
}

/** Starts reading each worker's CPU time and its group's throttling; `stop(seconds)` gives their use over those seconds. */
export function meterCapUse(workers: CappedProcess[]) {
  const read = () => workers.map((w) => ({ cpu: processCpuSeconds(w.pid) ?? NaN, throttle: w.group.throttling() }));
  const before = read();
  return {
    stop(seconds: number): CapUse[] {
      const after = read();
      return workers.map((w, i) => {
        const cpuSeconds = after[i]!.cpu - before[i]!.cpu;
        const periods = after[i]!.throttle.periods - before[i]!.throttle.periods;
        const throttled = after[i]!.throttle.throttledPeriods - before[i]!.throttle.throttledPeriods;
        return { pid: w.pid, cpuSeconds: +cpuSeconds.toFixed(2), cpuPerWallSecond: +(cpuSeconds / seconds).toFixed(3), throttledShare: periods > 0 ? +(throttled / periods).toFixed(2) : 0 };
      });
    },
  };
}

/** Fails the run, with no figure, when a worker used more than its cap: the curve would not be what it claims. */
export function assertCapHeld(uses: CapUse[], cap: number): void {
  const over = uses.filter((u) => u.cpuPerWallSecond > cap * CAP_TOLERANCE);
  if (over.length) throw new Error(`the CPU cap did not hold: worker(s) ${over.map((u) => `${u.pid} used ${u.cpuPerWallSecond} CPU per wall second`).join(', ')} against a cap of ${cap}; no figure reported`);
}

/** What the summary needs of one timed run. */
export interface CappedRun {
  workers: number;
  eventsPerSecond: number;
  /** All events ÷ the busiest worker's events: the most n workers can gain over one, whatever the CPU. */
  speedupBoundByPlacement: number;
  perWorker: CapUse[];
  cpuMicrosPerEvent: Record<string, number>;
  loadAverageAfter: number[];
}

/** The curve of medians per worker count, its ratios against one worker, and the proof that the caps held and bound. */
export function summarizeCappedRuns(runs: CappedRun[], cap: number) {
  const of = (n: number) => runs.filter((r) => r.workers === n);
  const curve = [1, 2, 3].map((n) => ({
    workers: n,
    medianEventsPerSecond: median(of(n).map((r) => r.eventsPerSecond)),
    runs: of(n).map((r) => r.eventsPerSecond),
    medianSpeedupBoundByPlacement: median(of(n).map((r) => r.speedupBoundByPlacement)),
  }));
  const ratio = (n: number) => +(curve[n - 1]!.medianEventsPerSecond / curve[0]!.medianEventsPerSecond).toFixed(2);
  const uses = runs.flatMap((r) => r.perWorker);
  return {
    cpuCapPerWorker: cap,
    curve,
    twoOverOne: ratio(2),
    threeOverOne: ratio(3),
    // What the placement allows (all events / the busiest worker's), medians: the ratio cannot exceed it.
    twoOverOneBoundByPlacement: curve[1]!.medianSpeedupBoundByPlacement,
    threeOverOneBoundByPlacement: curve[2]!.medianSpeedupBoundByPlacement,
    capVerification: {
      maxWorkerCpuPerWallSecond: Math.max(...uses.map((u) => u.cpuPerWallSecond)),
      minWorkerCpuPerWallSecond: Math.min(...uses.map((u) => u.cpuPerWallSecond)),
      medianThrottledShare: median(uses.map((u) => u.throttledShare)),
    },
    cpuMicrosPerEvent: Object.fromEntries([...new Set(runs.flatMap((r) => Object.keys(r.cpuMicrosPerEvent)))].map((g) => [g, median(runs.map((r) => r.cpuMicrosPerEvent[g] ?? 0))])),
    loadAverage1mDuringRuns: { min: Math.min(...runs.map((r) => r.loadAverageAfter[0]!)), max: Math.max(...runs.map((r) => r.loadAverageAfter[0]!)) },
  };
}

export type CappedSummary = ReturnType<typeof summarizeCappedRuns>;

/** The lines every capped benchmark prints at its end. */
export function printCappedSummary(summary: CappedSummary, unit: string): void {
  console.log(
    `\ncurve (medians): ${summary.curve.map((c) => `${c.workers} → ${c.medianEventsPerSecond} ${unit}/s`).join(', ')}; ` +
      `2/1 = ${summary.twoOverOne}× (placement allows ${summary.twoOverOneBoundByPlacement}×), 3/1 = ${summary.threeOverOne}× (placement allows ${summary.threeOverOneBoundByPlacement}×)`,
  );
  const v = summary.capVerification;
  console.log(`cap ${summary.cpuCapPerWorker} CPU verified: workers used ${v.minWorkerCpuPerWallSecond}–${v.maxWorkerCpuPerWallSecond} CPU per wall second, throttled in a median ${Math.round(v.medianThrottledShare * 100)} % of periods`);
  console.log(`CPU per ${unit} (µs, medians): ${Object.entries(summary.cpuMicrosPerEvent).map(([g, us]) => `${g} ${us}`).join(', ')}`);
}

/** Runs as points, and the medians against linear scaling and what the placement allows, by worker count. */
export function cappedCurveChart(p: { title: string; runs: CappedRun[]; summary: CappedSummary; workersTitle: string; rateTitle: string; placementLabel: string }): TopLevelSpec {
  const linear = p.summary.curve[0]!.medianEventsPerSecond;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: p.title,
    layer: [
      {
        data: { values: p.runs.map((r) => ({ workers: r.workers, eventsPerSecond: r.eventsPerSecond })) },
        mark: { type: 'point', opacity: 0.6 },
        encoding: { x: { field: 'workers', type: 'ordinal', title: p.workersTitle, axis: { labelAngle: 0 } }, y: { field: 'eventsPerSecond', type: 'quantitative', title: p.rateTitle } },
      },
      {
        data: {
          values: [
            ...p.summary.curve.map((c) => ({ workers: c.workers, eventsPerSecond: c.medianEventsPerSecond, series: 'median' })),
            ...p.summary.curve.map((c) => ({ workers: c.workers, eventsPerSecond: c.workers * linear, series: 'linear (n × 1-worker median)' })),
            ...p.summary.curve.map((c) => ({ workers: c.workers, eventsPerSecond: Math.round(c.medianSpeedupBoundByPlacement * linear), series: p.placementLabel })),
          ],
        },
        mark: { type: 'line', point: true },
        encoding: { x: { field: 'workers', type: 'ordinal' }, y: { field: 'eventsPerSecond', type: 'quantitative' }, color: { field: 'series', type: 'nominal', title: null, legend: { labelLimit: 300, orient: 'bottom' } } },
      },
    ],
    width: 500,
    height: 300,
  };
}

/** What a capped worker set needs of a worker process: its pid once spawned, and how to wait for it, stop it and kill it. */
export interface WorkerProcessKind<P> {
  /** For group names and messages, e.g. 'relay'. */
  name: string;
  spawn(): P;
  pid(p: P): number;
  waitUntilRunning(p: P): Promise<void>;
  /** A graceful stop (SIGTERM): the worker hands its work over, as in a deploy. */
  stop(p: P): Promise<void>;
  kill(p: P): Promise<void>;
}

/**
 * Worker processes of one kind, each moved into a cgroup of its own with the same quota once it
 * runs: its start (loading the code, bundling the workflows once, connecting) is not what is
 * measured, and would be slow under the cap. Grown and shrunk one process at a time, last in first out.
 */
export class CappedWorkerSet<P> {
  /** Workers running in their groups, in the order they were added. */
  readonly live: (CappedProcess & { process: P })[] = [];
  /** Spawned and not yet in a group: kept so that a failure while starting still kills them. */
  private readonly starting = new Set<P>();
  private started = 0;

  constructor(
    private readonly controller: CpuController,
    private readonly cap: number,
    private readonly kind: WorkerProcessKind<P>,
  ) {}

  async resize(n: number): Promise<void> {
    while (this.live.length < n) await this.add();
    while (this.live.length > n) await this.stopOne();
  }

  private async add(): Promise<void> {
    const process = this.kind.spawn();
    this.starting.add(process);
    await this.kind.waitUntilRunning(process);
    const pid = this.kind.pid(process);
    const group = createCappedGroup(this.controller, `${this.kind.name}-${++this.started}`, this.cap);
    this.live.push({ process, pid, group });
    this.starting.delete(process);
    group.add(pid);
    if (!group.pids().includes(pid)) throw new Error(`${this.kind.name} worker ${pid} is not in ${group.dir} after the move`);
  }

  private async stopOne(): Promise<void> {
    const w = this.live.pop()!;
    await this.kind.stop(w.process);
    w.group.remove();
  }

  /** Kills every worker and removes its group: the end of a benchmark, or its failure. */
  async killAll(): Promise<void> {
    for (const process of this.starting) await this.kind.kill(process).catch(() => undefined);
    this.starting.clear();
    while (this.live.length) {
      const w = this.live.pop()!;
      await this.kind.kill(w.process).catch(() => undefined);
      w.group.remove();
    }
  }
}

/** The cgroup cpu controller, or the process exits with code 2 and why no figure can be reported here. */
export function cpuControllerOrExit(benchmark: string, workers: string): CpuController {
  try {
    return openCpuController();
  } catch (err) {
    if (!(err instanceof CpuCapUnavailable)) throw err;
    console.error(`${benchmark}: cannot cap the ${workers}' CPU here — ${err.message}.\nWithout a cap the curve would measure the workers competing with PostgreSQL for the same cores, so no figure is reported.`);
    process.exit(2);
  }
}

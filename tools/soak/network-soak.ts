import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCell, type CellResult } from '../../test/kit/gray/cell';
import { BOUNDS, FAULTS, SERVICES, WORKER_KINDS, cellName, type Cell, type WorkerKind } from '../../test/kit/gray/cells';
import { GrayRig } from '../../test/kit/gray/rig';
import { checkpoint, type Checkpoint } from '../../test/kit/gray/verify';

export interface NetworkSoakOptions {
  /** Runs at least this long… */
  minutes: number;
  /** …and until at least this many faults were injected… */
  faults: number;
  /** …but stops starting faults after this long whatever the count. */
  maxMinutes: number;
  /** Seed of the random timing and order (the same seed, the same schedule of choices). */
  seed: number;
  log: (m: string) => void;
  /** Called with the figures so far after every cell (and with the final ones), so a killed run leaves them. */
  progress?: (result: NetworkSoakResult) => void;
  /** Ends the run early (SIGINT, SIGTERM): no new fault, the figures so far saved, the rig stopped; the run rejects. */
  signal?: AbortSignal;
}

/** One fault of the soak: the cell's figures, and the other workers' faults that were on when it began. */
export interface SoakRun extends CellResult {
  overlapping: string[];
}

export interface NetworkSoakResult {
  startedAt: string;
  finishedAt: string;
  seconds: number;
  seed: number;
  bounds: typeof BOUNDS;
  /** Faults injected (cells that could not run, listed in `errors`, injected none). */
  faults: number;
  /** False while the run is going on (the figures so far); true once drained and counted. */
  complete: boolean;
  /** The machine's 1-minute load average, sampled every 15 s during the run, and at its start and end. */
  loadAverage: { min: number; mean: number; max: number; cores: number; atStart: number; atEnd: number };
  runs: SoakRun[];
  /** Cells that could not run (the pipeline did not settle before the fault), with the reason. */
  errors: { cell: string; at: string; error: string }[];
  /** Everything the run committed, drained and checked at the end (absent while the run goes on). */
  final?: Checkpoint;
  /**
   * Step-asides of the workers whose links were never broken (relay B, consumer B): a healthy
   * worker, busy on a loaded machine, that stepped aside anyway. Must be 0.
   */
  healthyStepAsides: { relay: number; consumer: number };
  /**
   * Worker processes that exited during the run (none should: a fault breaks links, it kills no
   * process), with their exit code or signal and the last of their output, to see why.
   */
  workerExits: { worker: string; pid: number; code: number | null; signal: string | null; at: string; lastOutput: string[] }[];
}

// The soak's pace: a short random pause before each fault, a random hold, and shorter waits than
// the matrix test's (a cell that cannot settle is skipped sooner; a miss is measured 45 s past its bound).
const PAUSE_MS = { min: 500, spread: 3_500 };
const HOLD_MS = { min: 3_000, spread: 12_000 };
const SETTLE_MS = 90_000;
const MEASURE_PAST_BOUND_MS = 45_000;

/**
 * `npm run soak -- --network`: the gray-failure matrix over and over on one rig (test/kit/gray),
 * with the same cell runner as the tests. Three fault loops run at once, one per worker kind; each
 * kind's faults hit its "A" worker only, so every kind keeps a healthy member (relay B, consumer B;
 * retention has nobody to hand over to and must only resume), while a relay's, a consumer's and a
 * retention worker's links can be broken at the same time (mixed, overlapping faults). Each loop
 * takes its kind's 12 cells in a shuffled order, again and again, with a random pause before each
 * fault (0.5–4 s) and a random hold (3–15 s, and at least until the takeover).
 *
 * Overlap: a cell starts once its own worker holds work again; it waits for a young backlog (under
 * 5 s) only while no other fault is on. An event stuck behind another worker's fault is cleared
 * within that fault's bound, which started earlier and so ends earlier than this one's: the
 * takeover bound of each cell still holds when they overlap, and a cell's `overlapping` lists the
 * faults that were on when it began. At the end traffic stops, the pipeline drains, and lost,
 * double-applied and per-key order are counted over everything.
 */
export async function runNetworkSoak(opts: NetworkSoakOptions): Promise<NetworkSoakResult> {
  const random = mulberry32(opts.seed);
  const started = Date.now();
  const load: number[] = [];
  const sampler = setInterval(() => load.push(os.loadavg()[0]!), 15_000);
  load.push(os.loadavg()[0]!);
  const atStart = os.loadavg()[0]!;
  const runs: SoakRun[] = [];
  const errors: NetworkSoakResult['errors'] = [];
  const faultsOn = new Set<string>();
  const rig = await GrayRig.start({ retention: true, log: opts.log });
  const workerExits: NetworkSoakResult['workerExits'] = [];
  let stopping = false;
  const watchExit = (worker: string, child: ChildProcess, output: () => string[]) =>
    child.once('exit', (code, signal) => {
      if (stopping) return;
      workerExits.push({ worker, pid: child.pid ?? 0, code, signal, at: new Date().toISOString(), lastOutput: output().slice(-30) });
      opts.log(`${worker} (pid ${child.pid}) EXITED: code ${code}, signal ${signal}`);
    });
  watchExit('relay A', rig.relays.a.child, () => [...rig.relays.a.logLines, ...rig.relays.a.stderr.split('\n')]);
  watchExit('relay B', rig.relays.b.child, () => [...rig.relays.b.logLines, ...rig.relays.b.stderr.split('\n')]);
  watchExit('consumer A', rig.consumers.a.proc, () => [...rig.consumers.a.logs.map((l) => JSON.stringify(l)), ...rig.consumers.a.stderr]);
  watchExit('consumer B', rig.consumers.b.proc, () => [...rig.consumers.b.logs.map((l) => JSON.stringify(l)), ...rig.consumers.b.stderr]);
  if (rig.retention) watchExit('retention', rig.retention.proc, () => [...rig.retention!.logs.map((l) => JSON.stringify(l)), ...rig.retention!.stderr]);
  const elapsedMin = () => (Date.now() - started) / 60_000;
  const enough = () => opts.signal?.aborted || elapsedMin() >= opts.maxMinutes || (elapsedMin() >= opts.minutes && runs.length >= opts.faults);
  const stepAsides = (lines: string[]) => lines.filter((l) => l.includes('stepping aside until it answers again')).length;
  const snapshot = (final?: Checkpoint): NetworkSoakResult => ({
    startedAt: new Date(started).toISOString(),
    finishedAt: new Date().toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    seed: opts.seed,
    bounds: BOUNDS,
    faults: runs.length,
    complete: final !== undefined,
    loadAverage: { min: round1(Math.min(...load)), mean: round1(load.reduce((a, b) => a + b, 0) / load.length), max: round1(Math.max(...load)), cores: os.cpus().length, atStart: round1(atStart), atEnd: round1(os.loadavg()[0]!) },
    runs,
    errors,
    ...(final ? { final } : {}),
    healthyStepAsides: { relay: stepAsides(rig.relays.b.logLines), consumer: stepAsides(rig.consumers.b.logs.map((l) => String(l.msg))) },
    workerExits,
  });
  const report = (final?: Checkpoint) => {
    try {
      opts.progress?.(snapshot(final));
    } catch (err) {
      opts.log(`could not write the figures so far: ${(err as Error).message}`);
    }
  };
  try {
    const loop = async (kind: WorkerKind) => {
      const order: Cell[] = [];
      while (!enough()) {
        if (order.length === 0) order.push(...shuffle(SERVICES.flatMap((service) => FAULTS.map((fault) => ({ kind, service, fault }))), random));
        const cell = order.shift()!;
        await sleep(PAUSE_MS.min + random() * PAUSE_MS.spread);
        if (enough()) break;
        const name = cellName(cell);
        let overlapping: string[] = [];
        try {
          const result = await runCell(
            rig,
            cell,
            {
              holdMs: HOLD_MS.min + random() * HOLD_MS.spread,
              youngBacklog: () => faultsOn.size === 0,
              settleMs: SETTLE_MS,
              measurePastBoundMs: MEASURE_PAST_BOUND_MS,
              onFault: () => {
                overlapping = [...faultsOn];
                faultsOn.add(name);
              },
              onHealed: () => faultsOn.delete(name),
            },
            (m) => opts.log(`${elapsedMin().toFixed(1)} min: ${m}`),
          );
          runs.push({ ...result, overlapping });
        } catch (err) {
          faultsOn.delete(name);
          errors.push({ cell: name, at: new Date().toISOString(), error: (err as Error).message });
          opts.log(`${elapsedMin().toFixed(1)} min: ${name}: could not run: ${(err as Error).message}`);
        }
        report();
      }
    };
    // Interrupted, the cells in progress are not waited for: the rig is stopped under them.
    const interrupted = new Promise<void>((resolve) => {
      if (opts.signal?.aborted) resolve();
      opts.signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    await Promise.race([Promise.all(WORKER_KINDS.map(loop)), interrupted]);
    if (opts.signal?.aborted) {
      report();
      throw new Error(`interrupted after ${runs.length} faults in ${elapsedMin().toFixed(1)} min; the figures so far are saved`);
    }
    opts.log(`${runs.length} faults (${errors.length} more cells could not run) in ${elapsedMin().toFixed(1)} min; draining and counting`);
    const final = await checkpoint(rig, false);
    clearInterval(sampler);
    const result = snapshot(final);
    report(final);
    return result;
  } finally {
    clearInterval(sampler);
    stopping = true;
    await rig.stop();
  }
}

function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** A small seeded generator, so a run's choices can be repeated. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;

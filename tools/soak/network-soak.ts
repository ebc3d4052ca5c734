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
}

export interface NetworkSoakResult {
  startedAt: string;
  finishedAt: string;
  seconds: number;
  seed: number;
  bounds: typeof BOUNDS;
  faults: number;
  /** The machine's 1-minute load average, sampled every 15 s during the run. */
  loadAverage: { min: number; mean: number; max: number; cores: number };
  runs: CellResult[];
  /** Cells that could not run (the pipeline did not settle before the fault), with the reason. */
  errors: { cell: string; at: string; error: string }[];
  /** Everything the run committed, drained and checked at the end. */
  final: Checkpoint;
  /**
   * Step-asides of the workers whose links were never broken (relay B, consumer B): a healthy
   * worker, busy on a loaded machine, that stepped aside anyway. Must be 0.
   */
  healthyStepAsides: { relay: number; consumer: number };
}

/**
 * `npm run soak -- --network`: the gray-failure matrix over and over on one rig (test/kit/gray),
 * with the same cell runner as the tests. Three fault loops run at once, one per worker kind (each
 * kind has its own faulty worker, so a relay's, a consumer's and a retention worker's links can be
 * broken at the same time: mixed faults); each takes its kind's 12 cells in a shuffled order, again
 * and again, with a random pause before each fault (1–8 s) and a random hold (3–20 s, and at least
 * until the takeover). At the end traffic stops, the pipeline drains, and lost, double-applied and
 * per-key order are counted over everything.
 */
export async function runNetworkSoak(opts: NetworkSoakOptions): Promise<NetworkSoakResult> {
  const random = mulberry32(opts.seed);
  const started = Date.now();
  const load: number[] = [];
  const sampler = setInterval(() => load.push(os.loadavg()[0]!), 15_000);
  load.push(os.loadavg()[0]!);
  const runs: CellResult[] = [];
  const errors: NetworkSoakResult['errors'] = [];
  const rig = await GrayRig.start({ retention: true, log: opts.log });
  const elapsedMin = () => (Date.now() - started) / 60_000;
  const enough = () => elapsedMin() >= opts.maxMinutes || (elapsedMin() >= opts.minutes && runs.length + errors.length >= opts.faults);
  try {
    const loop = async (kind: WorkerKind) => {
      const order: Cell[] = [];
      while (!enough()) {
        if (order.length === 0) order.push(...shuffle(SERVICES.flatMap((service) => FAULTS.map((fault) => ({ kind, service, fault }))), random));
        const cell = order.shift()!;
        await sleep(1_000 + random() * 7_000);
        if (enough()) break;
        try {
          runs.push(await runCell(rig, cell, { holdMs: 3_000 + random() * 17_000 }, (m) => opts.log(`${(elapsedMin()).toFixed(1)} min: ${m}`)));
        } catch (err) {
          errors.push({ cell: cellName(cell), at: new Date().toISOString(), error: (err as Error).message });
          opts.log(`${cellName(cell)}: could not run: ${(err as Error).message}`);
        }
      }
    };
    await Promise.all(WORKER_KINDS.map(loop));
    opts.log(`${runs.length + errors.length} faults in ${elapsedMin().toFixed(1)} min; draining and counting`);
    const final = await checkpoint(rig, false);
    clearInterval(sampler);
    const stepAsides = (lines: string[]) => lines.filter((l) => l.includes('stepping aside until it answers again')).length;
    const healthyStepAsides = { relay: stepAsides(rig.relays.b.logLines), consumer: stepAsides(rig.consumers.b.logs.map((l) => String(l.msg))) };
    return {
      startedAt: new Date(started).toISOString(),
      finishedAt: new Date().toISOString(),
      seconds: Math.round((Date.now() - started) / 1000),
      seed: opts.seed,
      bounds: BOUNDS,
      faults: runs.length + errors.length,
      loadAverage: { min: round1(Math.min(...load)), mean: round1(load.reduce((a, b) => a + b, 0) / load.length), max: round1(Math.max(...load)), cores: os.cpus().length },
      runs,
      errors,
      final,
      healthyStepAsides,
    };
  } finally {
    clearInterval(sampler);
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

import fs from 'node:fs';
import path from 'node:path';

// Caps a process to a fixed CPU share with a cgroup of its own, so that a benchmark can make each
// relay worker the bottleneck: on two cores shared with PostgreSQL, Kafka and Temporal an
// uncapped second worker only competes for the same cores. Linux cgroup v1 (the `cpu`
// controller's cpu.cfs_quota_us) or v2 (cpu.max), whichever has the cpu controller here.
//
// There is deliberately no fallback: pinning with taskset gives each worker a whole core, which on
// a 2-core machine is shared with PostgreSQL and the broker, so the share a worker gets would
// depend on its neighbours, not on the benchmark. Without a writable cgroup the caller stops
// and says why (CpuCapUnavailable) rather than report a curve that is not what it claims.

const PERIOD_US = 100_000;
/** Every group this module creates is named so, to find leftovers of a benchmark that was killed. */
const GROUP_PREFIX = 'outbox-bench-';

export type CpuController = { version: 1 | 2; dir: string };

/** Why no cap can be set here (no cpu controller mounted, or not writable): the message says. */
export class CpuCapUnavailable extends Error {}

/**
 * The mount of the cgroup cpu controller, from /proc/self/mounts' text: v1 is a `cgroup` mount
 * whose options name `cpu`; v2 a `cgroup2` mount whose cgroup.controllers lists `cpu`
 * (`controllersOf` reads that file). v1 wins when both exist: a controller bound to a v1
 * hierarchy is absent from v2 (this machine: v1 `cpu`, and v2 at /sys/fs/cgroup/unified without it).
 */
export function findCpuController(mounts: string, controllersOf: (dir: string) => string | undefined): CpuController | undefined {
  const entries = mounts
    .split('\n')
    .map((line) => line.split(' '))
    .filter((f) => f.length >= 4)
    .map(([, dir, type, options]) => ({ dir: dir!.replace(/\\040/g, ' '), type: type!, options: options!.split(',') }));
  const v1 = entries.find((e) => e.type === 'cgroup' && e.options.includes('cpu'));
  if (v1) return { version: 1, dir: v1.dir };
  const v2 = entries.find((e) => e.type === 'cgroup2' && (controllersOf(e.dir) ?? '').split(/\s+/).includes('cpu'));
  return v2 ? { version: 2, dir: v2.dir } : undefined;
}

function readOrUndefined(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Throttling counters of a group (cpu.stat): periods with runnable tasks, and how many hit the quota. */
export interface ThrottleCounters {
  periods: number;
  throttledPeriods: number;
}

/** One process's cgroup with a CPU quota. */
export class CappedGroup {
  constructor(
    readonly controller: CpuController,
    readonly dir: string,
    /** The quota in CPUs (0.25 = a quarter of one core per period). */
    readonly cpus: number,
  ) {}

  /** Moves the whole process (every thread) into the group. */
  add(pid: number): void {
    fs.writeFileSync(path.join(this.dir, 'cgroup.procs'), String(pid));
  }

  /** The pids in the group now (to prove the move happened). */
  pids(): number[] {
    return (readOrUndefined(path.join(this.dir, 'cgroup.procs')) ?? '').split('\n').filter(Boolean).map(Number);
  }

  /** The quota as the kernel holds it, e.g. "25000 100000" (v2's cpu.max format for both). */
  quotaAsSet(): string {
    if (this.controller.version === 2) return (readOrUndefined(path.join(this.dir, 'cpu.max')) ?? '').trim();
    return `${(readOrUndefined(path.join(this.dir, 'cpu.cfs_quota_us')) ?? '').trim()} ${(readOrUndefined(path.join(this.dir, 'cpu.cfs_period_us')) ?? '').trim()}`;
  }

  throttling(): ThrottleCounters {
    const stat = readOrUndefined(path.join(this.dir, 'cpu.stat')) ?? '';
    const field = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(stat)?.[1] ?? NaN);
    return { periods: field('nr_periods'), throttledPeriods: field('nr_throttled') };
  }

  /** Moves anything still inside back to the parent, then removes the group. */
  remove(): void {
    for (const pid of this.pids()) {
      try {
        fs.writeFileSync(path.join(path.dirname(this.dir), 'cgroup.procs'), String(pid));
      } catch {
        // it exited meanwhile
      }
    }
    try {
      fs.rmdirSync(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
}

/** The cpu controller if this process may create groups under it; otherwise CpuCapUnavailable saying why. */
export function openCpuController(): CpuController {
  const mounts = readOrUndefined('/proc/self/mounts');
  if (mounts === undefined) throw new CpuCapUnavailable('no /proc/self/mounts: CPU caps need Linux cgroups');
  const controller = findCpuController(mounts, (dir) => readOrUndefined(path.join(dir, 'cgroup.controllers')));
  if (!controller) throw new CpuCapUnavailable('no cgroup cpu controller is mounted (neither a v1 "cpu" hierarchy nor cgroup v2 with "cpu" in cgroup.controllers)');
  try {
    fs.accessSync(controller.dir, fs.constants.W_OK);
  } catch {
    throw new CpuCapUnavailable(`the cgroup ${controller.version === 1 ? 'v1 cpu hierarchy' : 'v2 hierarchy'} at ${controller.dir} is not writable by this user (run as root, or delegate a cgroup to it)`);
  }
  if (controller.version === 2) {
    // A child's cpu.max exists only once its parent hands the controller down.
    const subtree = path.join(controller.dir, 'cgroup.subtree_control');
    if (!(readOrUndefined(subtree) ?? '').split(/\s+/).includes('cpu')) {
      try {
        fs.writeFileSync(subtree, '+cpu');
      } catch (err) {
        throw new CpuCapUnavailable(`cannot enable the cpu controller for child groups in ${subtree}: ${(err as Error).message}`);
      }
    }
  }
  removeLeftovers(controller);
  return controller;
}

/** Groups of benchmarks that were killed before they cleaned up: removed when empty and their owner is gone. */
function removeLeftovers(controller: CpuController) {
  for (const name of fs.readdirSync(controller.dir)) {
    const owner = new RegExp(`^${GROUP_PREFIX}(\\d+)-`).exec(name)?.[1];
    if (!owner || fs.existsSync(`/proc/${owner}`)) continue;
    try {
      fs.rmdirSync(path.join(controller.dir, name));
    } catch {
      // still has processes: left alone
    }
  }
}

/** Creates a group capped at `cpus` CPUs (0 < cpus), named after this process and `label`. */
export function createCappedGroup(controller: CpuController, label: string, cpus: number): CappedGroup {
  if (!(cpus > 0)) throw new Error(`CPU cap must be positive, got ${cpus}`);
  const quota = Math.round(cpus * PERIOD_US);
  const dir = path.join(controller.dir, `${GROUP_PREFIX}${process.pid}-${label}`);
  try {
    fs.mkdirSync(dir);
  } catch (err) {
    throw new CpuCapUnavailable(`cannot create the cgroup ${dir}: ${(err as Error).message}`);
  }
  const group = new CappedGroup(controller, dir, cpus);
  try {
    if (controller.version === 2) {
      fs.writeFileSync(path.join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
    } else {
      fs.writeFileSync(path.join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
      fs.writeFileSync(path.join(dir, 'cpu.cfs_quota_us'), String(quota));
    }
  } catch (err) {
    group.remove();
    throw new CpuCapUnavailable(`cannot set the CPU quota of ${dir}: ${(err as Error).message}`);
  }
  return group;
}

const TICKS_PER_SECOND = 100; // USER_HZ

/** A process's CPU time so far (utime + stime of all its threads), in seconds; undefined once it is gone. */
export function processCpuSeconds(pid: number): number | undefined {
  const stat = readOrUndefined(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

import fs from 'node:fs';
import os from 'node:os';

// Where the machine's CPU went during a run, by process group: on a 2-core machine that shares
// PostgreSQL, Kafka, the Temporal dev server and the relay, this says who the bottleneck is.
// Linux only (reads /proc); elsewhere it returns nothing.

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux we run on

type Group = string;

interface GroupOptions {
  workerLabel: string;
  /** When set, only this postmaster and its children count as 'postgres'; another cluster's are 'other postgres'. */
  postmasterPid?: number;
  /**
   * When set, a backend or autovacuum worker of another database (named in its process title)
   * counts as 'other databases': on a server other work shares, only this database's sessions
   * and the server's shared processes (WAL writer, checkpointer, …) are the benchmark's.
   */
  databaseName?: string;
}

/** The database a PostgreSQL process serves, from its title ('postgres: user db host(port) state', 'postgres: autovacuum worker db'); undefined for shared processes. */
export function databaseOfPostgresTitle(title: string): string | undefined {
  return /^postgres: autovacuum worker (\S+)/.exec(title)?.[1] ?? /^postgres: \S+ (\S+) (?:\[local\]|\S+\(\d+\))/.exec(title)?.[1];
}

function groupOf(pid: number, ppid: number, comm: string, cmdline: string, workers: Map<number, Group>, o: GroupOptions): Group {
  if (pid === process.pid) return 'benchmark';
  const worker = workers.get(pid);
  if (worker !== undefined) return worker;
  if (comm === 'postgres' || comm === 'postmaster') {
    if (o.postmasterPid !== undefined && pid !== o.postmasterPid && ppid !== o.postmasterPid) return 'other postgres';
    const database = o.databaseName === undefined ? undefined : databaseOfPostgresTitle(cmdline);
    return database !== undefined && database !== o.databaseName ? 'other databases' : 'postgres';
  }
  if (comm === 'java' && cmdline.includes('kafka')) return 'kafka';
  if (comm.startsWith('temporal')) return 'temporal';
  // Temporal's own server (TEMPORAL_SERVER=postgres or cluster) and its UI server are binaries named `server`.
  if (/\/temporal-(?:ui-)?server-v[^/]+\/server(?:\s|$)/.test(cmdline)) return 'temporal';
  return 'other';
}

/** CPU ticks per live process with its group. Per pid, because processes come and go (a pool's
 * PostgreSQL backends): a group total would drop when one of them exits. */
function snapshot(workers: Map<number, Group>, o: GroupOptions): Map<number, { group: Group; ticks: number }> {
  const perPid = new Map<number, { group: Group; ticks: number }>();
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
      const cmdline = comm === 'java' || comm === 'server' || (comm === 'postgres' && o.databaseName !== undefined) ? fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').trim() : '';
      perPid.set(Number(entry), { group: groupOf(Number(entry), Number(fields[1]), comm, cmdline, workers, o), ticks });
    } catch {
      // the process ended while we read it
    }
  }
  return perPid;
}

/**
 * Starts measuring; `stop()` returns CPU seconds per group and the share of all cores used.
 * The processes `workerPids` names are grouped under `workerLabel` (default 'relay worker'), or,
 * given as pids per label, under each label (a run with a relay and a consumer worker).
 */
export function measureCpu(workerPids: () => number[] | Record<Group, number[]>, options: Partial<GroupOptions> = {}) {
  const o: GroupOptions = { workerLabel: 'relay worker', ...options };
  const workers = () => {
    const named = workerPids();
    return new Map(Array.isArray(named) ? named.map((pid) => [pid, o.workerLabel]) : Object.entries(named).flatMap(([label, pids]) => pids.map((pid) => [pid, label] as const)));
  };
  const started = Date.now();
  const before = snapshot(workers(), o);
  return {
    stop() {
      const after = snapshot(workers(), o);
      const wallSeconds = (Date.now() - started) / 1000;
      // Processes that ended during the run are missed (an undercount, never a negative).
      const ticksByGroup = new Map<Group, number>();
      for (const [pid, { group, ticks }] of after) ticksByGroup.set(group, (ticksByGroup.get(group) ?? 0) + ticks - (before.get(pid)?.ticks ?? 0));
      const bySecondsUsed: Record<string, number> = {};
      for (const [group, ticks] of ticksByGroup) if (ticks > 0) bySecondsUsed[group] = +(ticks / TICKS_PER_SECOND).toFixed(2);
      const total = Object.values(bySecondsUsed).reduce((a, b) => a + b, 0);
      return { wallSeconds: +wallSeconds.toFixed(2), cpuSeconds: bySecondsUsed, coresBusy: +(total / wallSeconds).toFixed(2), cores: os.cpus().length };
    },
  };
}

/** CPU µs per event per group, from `stop()`'s `cpuSeconds` over `events` events, to `decimals` places. */
export function microsPerEvent(cpuSeconds: Record<string, number>, events: number, decimals = 0): Record<string, number> {
  return Object.fromEntries(Object.entries(cpuSeconds).map(([group, seconds]) => [group, +((seconds * 1e6) / Math.max(1, events)).toFixed(decimals)]));
}

/** The postmaster behind a pool: the parent of one of its backends (Linux; undefined elsewhere). */
export async function postmasterPidOf(pool: { query(sql: string): Promise<{ rows: { pid: number }[] }> }): Promise<number | undefined> {
  const backend = (await pool.query('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  try {
    const stat = fs.readFileSync(`/proc/${backend}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** The child of `parentPid` whose process title starts with `title` (e.g. PostgreSQL's 'postgres: walwriter'), Linux; undefined if none. */
export function childPidByTitle(parentPid: number, title: string): number | undefined {
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== parentPid) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').replace(/\0/g, ' ').startsWith(title)) return Number(entry);
    } catch {
      // the process ended while we read it
    }
  }
  return undefined;
}

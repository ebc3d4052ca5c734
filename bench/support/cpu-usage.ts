import fs from 'node:fs';
import os from 'node:os';

// Where the machine's CPU went during a run, by process group: on a 2-core machine that shares
// PostgreSQL, Kafka, the Temporal dev server and the relay, this says who the bottleneck is.
// Linux only (reads /proc); elsewhere it returns nothing.

const TICKS_PER_SECOND = 100; // USER_HZ, 100 on every Linux we run on

type Group = 'postgres' | 'kafka' | 'temporal' | 'relay worker' | 'benchmark' | 'other';

function groupOf(pid: number, comm: string, cmdline: string, workerPids: Set<number>): Group {
  if (pid === process.pid) return 'benchmark';
  if (workerPids.has(pid)) return 'relay worker';
  if (comm === 'postgres' || comm === 'postmaster') return 'postgres';
  if (comm === 'java' && cmdline.includes('kafka')) return 'kafka';
  if (comm.startsWith('temporal')) return 'temporal';
  return 'other';
}

/** CPU ticks per live process with its group. Per pid, because processes come and go (a pool's
 * PostgreSQL backends): a group total would drop when one of them exits. */
function snapshot(workerPids: Set<number>): Map<number, { group: Group; ticks: number }> {
  const perPid = new Map<number, { group: Group; ticks: number }>();
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
      const cmdline = comm === 'java' ? fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8') : '';
      perPid.set(Number(entry), { group: groupOf(Number(entry), comm, cmdline, workerPids), ticks });
    } catch {
      // the process ended while we read it
    }
  }
  return perPid;
}

/** Starts measuring; `stop()` returns CPU seconds per group and the share of all cores used. */
export function measureCpu(workerPids: () => number[]) {
  const started = Date.now();
  const before = snapshot(new Set(workerPids()));
  return {
    stop() {
      const after = snapshot(new Set(workerPids()));
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

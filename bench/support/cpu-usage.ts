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

function snapshot(workerPids: Set<number>): Map<Group, number> {
  const totals = new Map<Group, number>();
  for (const entry of fs.existsSync('/proc') ? fs.readdirSync('/proc') : []) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const comm = stat.slice(stat.indexOf('(') + 1, close);
      const fields = stat.slice(close + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
      const cmdline = comm === 'java' ? fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8') : '';
      const group = groupOf(Number(entry), comm, cmdline, workerPids);
      totals.set(group, (totals.get(group) ?? 0) + ticks);
    } catch {
      // the process ended while we read it
    }
  }
  return totals;
}

/** Starts measuring; `stop()` returns CPU seconds per group and the share of all cores used. */
export function measureCpu(workerPids: () => number[]) {
  const started = Date.now();
  const before = snapshot(new Set(workerPids()));
  return {
    stop() {
      const after = snapshot(new Set(workerPids()));
      const wallSeconds = (Date.now() - started) / 1000;
      const bySecondsUsed: Record<string, number> = {};
      for (const [group, ticks] of after) {
        const used = (ticks - (before.get(group) ?? 0)) / TICKS_PER_SECOND;
        if (used > 0) bySecondsUsed[group] = +used.toFixed(2);
      }
      const total = Object.values(bySecondsUsed).reduce((a, b) => a + b, 0);
      return { wallSeconds: +wallSeconds.toFixed(2), cpuSeconds: bySecondsUsed, coresBusy: +(total / wallSeconds).toFixed(2), cores: os.cpus().length };
    },
  };
}

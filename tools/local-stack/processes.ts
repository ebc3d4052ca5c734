import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { StackError } from './errors';

// Local services run as detached daemons: one PID file and one log file each under the cache
// folder, so `up` in one terminal and `down` or `status` in another agree on what runs.

export interface DaemonSpec {
  name: string;
  command: string;
  args: string[];
  runDir: string;
  logFile: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Run as this OS user (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
}

export function pidFile(runDir: string, name: string): string {
  return path.join(runDir, `${name}.pid`);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The PID recorded for a service if that process still runs; a stale PID file is removed. */
export function runningPid(runDir: string, name: string): number | undefined {
  const file = pidFile(runDir, name);
  let pid: number;
  try {
    pid = Number(fs.readFileSync(file, 'utf8').trim());
  } catch {
    return undefined;
  }
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid) && !isZombie(pid)) return pid;
  fs.rmSync(file, { force: true });
  return undefined;
}

function isZombie(pid: number): boolean {
  try {
    return /\nState:\s+Z/.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

export function startDaemon(spec: DaemonSpec): number {
  fs.mkdirSync(spec.runDir, { recursive: true });
  fs.mkdirSync(path.dirname(spec.logFile), { recursive: true });
  const log = fs.openSync(spec.logFile, 'a');
  if (spec.uid !== undefined) fs.fchownSync(log, spec.uid, spec.gid ?? spec.uid);
  const child = spawn(spec.command, spec.args, {
    detached: true,
    stdio: ['ignore', log, log],
    env: spec.env ?? process.env,
    cwd: spec.cwd,
    uid: spec.uid,
    gid: spec.gid,
  });
  fs.closeSync(log);
  if (child.pid === undefined) throw new StackError(`could not start ${spec.name} (${spec.command}): see ${spec.logFile}`);
  child.unref();
  fs.writeFileSync(pidFile(spec.runDir, spec.name), `${child.pid}\n`);
  return child.pid;
}

/** SIGTERM, then SIGKILL if the process outlives the grace period. */
export async function stopDaemon(runDir: string, name: string, graceMs = 15_000): Promise<boolean> {
  const pid = runningPid(runDir, name);
  if (pid === undefined) return false;
  signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && !isZombie(pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(pid) && !isZombie(pid)) signalGroup(pid, 'SIGKILL');
  fs.rmSync(pidFile(runDir, name), { force: true });
  return true;
}

function signalGroup(pid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Polls `probe` until it answers true; fails after `timeoutMs` saying what it waited for and
 * where the log is, and fails early if the daemon died.
 */
export async function waitUntil(
  what: string,
  probe: () => Promise<boolean>,
  opts: { timeoutMs: number; pid?: number; logFile?: string },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const seeLog = opts.logFile ? `; see ${opts.logFile}` : '';
  while (Date.now() < deadline) {
    if (await probe().catch(() => false)) return;
    if (opts.pid !== undefined && (!isAlive(opts.pid) || isZombie(opts.pid))) {
      const lastLines = opts.logFile ? `\n${tailOf(opts.logFile, 8)}` : '';
      throw new StackError(`${what}: the process exited during startup${seeLog}${lastLines}`);
    }
    await sleep(250);
  }
  throw new StackError(`timed out after ${Math.round(opts.timeoutMs / 1000)} s waiting for ${what}${seeLog}`);
}

export function tailOf(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

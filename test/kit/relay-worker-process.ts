import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { WORKER_ENV, WORKER_NODE_ARGS } from '../../workers/node-args';
import { nodeScript } from './compiled-build';
import { procStatusKiB } from './process-memory';
import { trackChild } from './spawned-children';
import { keepWorkerLog } from './worker-log-file';

export interface WorkerMemoryLog {
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
}

/**
 * A relay worker process (`workers/relay.worker.ts`) with its own environment: what the relay
 * benchmark measures and what the crash tests kill -9. stderr is kept for diagnostics.
 */
export class RelayWorkerProcess {
  readonly child: ChildProcess;
  stderr = '';
  /** Every complete log line of stdout (tests grep them, e.g. for secrets that must not be there). */
  readonly logLines: string[] = [];
  /** The last `relay worker memory` line's figures (workers/memory-log.ts; RELAY_MEMORY_LOG_MS set). */
  lastMemoryLog?: WorkerMemoryLog;
  private running = false;
  private stdoutTail = '';

  /**
   * `extraNodeArgs` come after the production flags (diagnostics such as --heapsnapshot-signal).
   * `entry` is the script and its arguments: the production worker unless a test runs its own
   * fixture around it (test/fixtures/relay-worker-fault-point.ts).
   */
  constructor(env: Record<string, string>, extraNodeArgs: string[] = [], entry: string[] = [path.join(PROJECT_ROOT, 'workers', 'relay.worker.ts')]) {
    const [script, ...args] = entry;
    this.child = trackChild(
      // From the run's compiled build (test/kit/compiled-build.ts), as an installed package runs it.
      spawn(process.execPath, [...WORKER_NODE_ARGS.relay, ...extraNodeArgs, ...nodeScript(script!), ...args], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, ...WORKER_ENV, LOG_LEVEL: 'info', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    keepWorkerLog(this.child, 'relay');
    this.child.stdout!.on('data', (d: Buffer) => {
      const lines = (this.stdoutTail + d.toString()).split('\n');
      this.stdoutTail = lines.pop()!;
      for (const line of lines) this.onLogLine(line);
    });
  }

  private onLogLine(line: string) {
    this.logLines.push(line);
    if (line.includes('relay worker running')) this.running = true;
    if (line.includes('relay worker memory')) this.lastMemoryLog = (JSON.parse(line) as { memory: WorkerMemoryLog }).memory;
  }

  /** Resolves once the worker has bundled its workflows and polls its task queue. */
  async waitUntilRunning(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.running) {
      if (this.child.exitCode !== null) throw new Error(`relay worker exited (${this.child.exitCode}):\n${this.stderr}`);
      if (Date.now() > deadline) throw new Error(`relay worker not running after ${timeoutMs} ms:\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** The process's peak resident memory so far (VmHWM, Linux), in MiB; undefined elsewhere. */
  peakRssMiB(): number | undefined {
    return this.procStatusMiB('VmHWM');
  }

  /** The process's resident memory now (VmRSS, Linux), in MiB; undefined elsewhere. */
  rssMiB(): number | undefined {
    return this.procStatusMiB('VmRSS');
  }

  private procStatusMiB(field: 'VmHWM' | 'VmRSS'): number | undefined {
    const kib = procStatusKiB(this.child.pid!)?.[field];
    return kib === undefined ? undefined : Math.round(kib / 1024);
  }

  /**
   * Starts a new high-water mark at the current RSS (Linux ≥ 4.0: writing 5 to clear_refs), so
   * one worker that runs many configurations reports each one's peak separately.
   */
  resetPeakRss(): void {
    try {
      fs.writeFileSync(`/proc/${this.child.pid}/clear_refs`, '5');
    } catch {
      // Not Linux, or not permitted: peaks then accumulate over the runs, as VmHWM does.
    }
  }

  /** SIGTERM, as an orchestrator stops a worker: it leaves the relay workers and finishes its batches. */
  stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGTERM');
    });
  }

  kill9(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }
}

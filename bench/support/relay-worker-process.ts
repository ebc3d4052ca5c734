import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../config/env';
import { WORKER_NODE_ARGS } from '../../workers/node-args';

/**
 * A relay worker process (`workers/relay.worker.ts`) with its own environment: what the relay
 * benchmark measures and what the crash tests kill -9. stderr is kept for diagnostics.
 */
export class RelayWorkerProcess {
  readonly child: ChildProcess;
  stderr = '';
  private running = false;

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [...WORKER_NODE_ARGS.relay, '--require', 'tsx/cjs', path.join(PROJECT_ROOT, 'workers', 'relay.worker.ts')], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.child.stdout!.on('data', (d: Buffer) => {
      if (!this.running && d.toString().includes('relay worker running')) this.running = true;
    });
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
    try {
      const kb = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${this.child.pid}/status`, 'utf8'))?.[1];
      return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
    } catch {
      return undefined;
    }
  }

  kill9(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.kill('SIGKILL');
    });
  }
}

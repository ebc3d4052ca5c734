import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { PeerListenerOptions } from './peer-settings';

/**
 * A pg-transactional-outbox listener in its own process (peer-listener.process.ts); collects the
 * time its publisher was called, per message id.
 */
export class PeerListenerProcess {
  /** Listeners not yet stopped, for a benchmark that is interrupted. */
  static readonly running = new Set<PeerListenerProcess>();
  readonly child: ChildProcess;
  readonly handledAt = new Map<string, number>();
  stderr = '';
  /** Error-level lines the package logged (pino level ≥ 50), and the last few of them. */
  errorLines = 0;
  lastErrors: string[] = [];
  private stopping = false;
  private stdoutTail = '';
  private started: Promise<void>;
  private stopped: Promise<void>;

  constructor(readonly options: PeerListenerOptions) {
    this.child = fork(path.join(__dirname, 'peer-listener.process.ts'), [], {
      execArgv: ['--require', 'tsx/cjs'],
      env: { ...process.env, PEER_LISTENER_OPTIONS: JSON.stringify(options) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr += d.toString()));
    // The package logs JSON (pino) on stdout. Kept out of the benchmark's output, but counted:
    // errors while running are a finding; those after `stop` are messages cut short by the
    // shutdown of a listener that had not drained (the package retries them on its next start).
    this.child.stdout!.on('data', (d: Buffer) => {
      const lines = (this.stdoutTail + d.toString()).split('\n');
      this.stdoutTail = lines.pop()!;
      for (const line of lines) {
        if (this.stopping || !/"level":(5|6)0/.test(line)) continue;
        this.errorLines += 1;
        this.lastErrors = [...this.lastErrors.slice(-2), line.slice(0, 500)];
      }
    });
    let onStarted!: () => void;
    let onStopped!: () => void;
    this.started = new Promise((r) => (onStarted = r));
    this.stopped = new Promise((r) => (onStopped = r));
    this.child.on('message', (m: { type: string; entries?: [string, number][] }) => {
      if (m.type === 'started') onStarted();
      if (m.type === 'stopped') onStopped();
      // The first call counts (a redelivery would be a repeat, not a later delivery).
      for (const [id, at] of m.entries ?? []) if (!this.handledAt.has(id)) this.handledAt.set(id, at);
    });
    this.child.on('exit', () => {
      PeerListenerProcess.running.delete(this);
      onStopped();
    });
    PeerListenerProcess.running.add(this);
  }

  async waitStarted(timeoutMs = 60_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`peer ${this.options.kind} listener did not start in ${timeoutMs} ms:\n${this.stderr}`)), timeoutMs)));
    try {
      await Promise.race([this.started, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Asks the listener to shut down as its API says; kills it if it has not within timeoutMs. */
  async stop(timeoutMs = 15_000): Promise<void> {
    this.stopping = true;
    if (this.child.exitCode === null && this.child.connected) this.child.send({ type: 'stop' });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    await this.stopped;
    clearTimeout(timer);
  }
}

import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkerEntry } from 'temporal-outbox';

export interface ChildWorker {
  name: string;
  process: ChildProcess;
  logFile: string;
}

export interface ChildWorkerOptions {
  /**
   * Run it in a process group of its own. A terminal's Ctrl-C signals the whole foreground group:
   * without this the workers stop the moment the user presses it, before the parent has drained
   * what they were carrying. With it only the parent hears Ctrl-C and stops them when it is
   * ready (stopChildWorkers).
   */
  ownProcessGroup?: boolean;
}

/**
 * Starts a worker entry point (a path, relative to the working directory or absolute) as a child
 * process with its output in a log file, so the terminal stays readable and a crash of one
 * worker does not take the others down. TypeScript entries run through tsx.
 */
export function startChildWorker(name: string, entry: string, logDir: string, env: NodeJS.ProcessEnv = process.env, nodeArgs: string[] = [], options: ChildWorkerOptions = {}): ChildWorker {
  fs.mkdirSync(logDir, { recursive: true });
  const logFile = path.join(logDir, `${name}.log`);
  const out = fs.openSync(logFile, 'a');
  const file = path.resolve(entry);
  const loader = file.endsWith('.ts') && !nodeArgs.includes('tsx/cjs') ? ['--require', 'tsx/cjs'] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, file], {
    env,
    stdio: ['ignore', out, out],
    detached: options.ownProcessGroup ?? false,
  });
  fs.closeSync(out);
  return { name, process: child, logFile };
}

/**
 * Starts one of the three workers as `workerEntry` describes it (its file, Node flags and
 * environment), as a supervisor would; `extraNodeArgs` come after its own flags, so they win.
 */
export function startWorkerEntry(name: string, entry: WorkerEntry, logDir: string, env: NodeJS.ProcessEnv = process.env, extraNodeArgs: string[] = [], options: ChildWorkerOptions = {}): ChildWorker {
  return startChildWorker(name, entry.file, logDir, { ...env, ...entry.env }, [...entry.nodeArgs, ...extraNodeArgs], options);
}

/** SIGTERM (workers drain their current activity), then SIGKILL after the grace period. */
export async function stopChildWorkers(workers: ChildWorker[], graceMs = 20_000): Promise<void> {
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.process.exitCode !== null || w.process.signalCode !== null) return resolve();
          const timer = setTimeout(() => w.process.kill('SIGKILL'), graceMs);
          w.process.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          w.process.kill('SIGTERM');
        }),
    ),
  );
}

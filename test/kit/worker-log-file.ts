import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A long run (the network soak, the gray matrix) can keep each worker's whole output in a file,
 * to see after the fact why one stopped or held on to its work: OUTBOX_TEST_WORKER_LOG_DIR names
 * the directory, and each worker writes `<kind>-<pid>.log` there, ended by its exit status.
 */
export function keepWorkerLog(child: ChildProcess, kind: string, dir = process.env.OUTBOX_TEST_WORKER_LOG_DIR): void {
  if (!dir || child.pid === undefined) return;
  fs.mkdirSync(dir, { recursive: true });
  const file = fs.createWriteStream(path.join(dir, `${kind}-${child.pid}.log`));
  child.stdout?.on('data', (d: Buffer) => file.write(d));
  child.stderr?.on('data', (d: Buffer) => file.write(d));
  child.once('exit', (code, signal) => file.end(`[exit] code ${code} signal ${signal}\n`));
}

import fs from 'node:fs';
import path from 'node:path';
import { StackError } from './errors';
import { isAlive, sleep } from './processes';

// One build of a cached artefact at a time across processes: CI builds the Schema Registry in the
// background (`stack build --with schema-registry`) while the suite runs, and the first test that
// needs the registry must wait for that build rather than start a second one into the same folder.
// The lock is a directory (mkdir is atomic) holding the builder's PID; a lock whose builder died is
// taken over.

const POLL_MS = 1_000;
const ORPHAN_MS = 10_000;

/** Runs `build` holding the lock `<dir>/build.lock`; waits up to `timeoutMs` for another holder. */
export async function withBuildLock<T>(dir: string, what: string, build: () => T | Promise<T>, opts: { timeoutMs?: number; onWait?: () => void } = {}): Promise<T> {
  const lock = path.join(dir, 'build.lock');
  const owner = path.join(lock, 'pid');
  const deadline = Date.now() + (opts.timeoutMs ?? 15 * 60_000);
  fs.mkdirSync(dir, { recursive: true });
  let waited = false;
  for (;;) {
    try {
      fs.mkdirSync(lock);
      fs.writeFileSync(owner, `${process.pid}\n`);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number(readOr(owner));
    // No PID yet: the holder is between its mkdir and its write, or died there (then the lock ages).
    if (holder > 0 ? !isAlive(holder) : ageMs(lock) > ORPHAN_MS) {
      fs.rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new StackError(`gave up waiting for another process (pid ${holder || 'unknown'}) building ${what}; remove ${lock} if no build runs`);
    if (!waited) opts.onWait?.();
    waited = true;
    await sleep(POLL_MS);
  }
  try {
    return await build();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

import type { ChildProcess } from 'node:child_process';

// Every child process the kit spawns (worker processes, the fault proxy's server) while it runs,
// so a long-running tool built on the kit (the network soak) can end them when it is interrupted
// or fails, instead of leaving them running without a parent.
const running = new Set<ChildProcess>();

/** Remembers `child` until it exits; returns it. */
export function trackChild<C extends ChildProcess>(child: C): C {
  if (child.exitCode === null && child.signalCode === null) {
    running.add(child);
    child.once('exit', () => running.delete(child));
  }
  return child;
}

/** SIGKILLs every tracked child still running (synchronous: usable from an 'exit' handler); returns how many. */
export function killSpawnedChildren(): number {
  let killed = 0;
  for (const child of running) {
    if (child.kill('SIGKILL')) killed += 1;
    running.delete(child);
  }
  return killed;
}

import { killSpawnedChildren } from './spawned-children';

// Mocha require module: a test run stopped by SIGINT or SIGTERM (Ctrl-C, a CI timeout, a parent
// that gives up) kills the worker processes and fault proxies its tests spawned before it exits.
// Serial mocha installs no handler of its own, so without this the process dies at the signal and
// its children, no longer anyone's, keep running (and keep consuming, relaying, holding ports).
// The 'exit' handler covers every other way out, mocha's own process.exit at the end included.
const exitCodes: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 130, SIGTERM: 143 };

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    const killed = killSpawnedChildren();
    process.stderr.write(`\n${signal}: the test run stops${killed > 0 ? `; killed ${killed} child processes it had started` : ''}\n`);
    process.exit(exitCodes[signal]);
  });
}
process.on('exit', () => killSpawnedChildren());

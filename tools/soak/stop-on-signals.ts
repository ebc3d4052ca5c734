import fs from 'node:fs';
import { killSpawnedChildren } from '../../test/kit/spawned-children';
import { isAlive } from '../local-stack/processes';

// How long an interrupted soak may take to stop its rig (kill its workers and proxy, drop what it
// made) before every child process it spawned is killed anyway and it exits.
const STOP_BOUND_MS = 30_000;

/**
 * Runs `work` so that no child process outlives it: the first SIGINT or SIGTERM aborts the signal
 * given to `work` (which stops its rig) and exits once `work` has ended, or after 30 s; a second
 * signal exits at once. Whatever ends the process (a signal, a failure, an uncaught error), every
 * child the test kit spawned and that is still running is killed first (test/kit/spawned-children.ts).
 * Returns the process's exit code: 0, 1 on failure, 130/143 after SIGINT/SIGTERM.
 */
export async function runStoppingChildren(work: (signal: AbortSignal) => Promise<void>, log: (m: string) => void): Promise<number> {
  const controller = new AbortController();
  let signalled: NodeJS.Signals | undefined;
  const exitCode = (signal: NodeJS.Signals) => (signal === 'SIGINT' ? 130 : 143);
  const killAll = () => {
    const killed = killSpawnedChildren();
    if (killed > 0) log(`killed ${killed} child processes still running`);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      log(`${signal} again: stopping now`);
      killAll();
      process.exit(exitCode(signal));
    }
    signalled = signal;
    log(`${signal}: stopping the workers and the fault proxy (at most ${STOP_BOUND_MS / 1000} s)`);
    controller.abort();
    setTimeout(() => {
      log(`not stopped within ${STOP_BOUND_MS / 1000} s`);
      killAll();
      process.exit(exitCode(signal));
    }, STOP_BOUND_MS).unref();
  };
  const onFatal = (err: unknown) => {
    log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    killAll();
    process.exit(1);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // `npm run soak` killed by its pid: npm ends its shell, which passes the signal on to nobody, so
  // this process would run on without a parent to report to. Its end counts as a SIGTERM.
  const launcher = npmAncestor();
  const watchLauncher = launcher === undefined ? undefined : setInterval(() => {
    if (!isAlive(launcher)) {
      clearInterval(watchLauncher);
      log(`npm (pid ${launcher}), which started this run, is gone`);
      onSignal('SIGTERM');
    }
  }, 1_000);
  watchLauncher?.unref();
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  // The last resort, for any other way out (process.exit anywhere): synchronous, as 'exit' requires.
  process.on('exit', killAll);
  let code = 0;
  try {
    await work(controller.signal);
  } catch (err) {
    if (!signalled) log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    code = 1;
  }
  killAll();
  return signalled ? exitCode(signalled) : code;
}

/** The nearest ancestor that is npm (Linux: read from /proc), if this process was started by one. */
function npmAncestor(): number | undefined {
  let pid = process.ppid;
  for (let depth = 0; depth < 6 && pid > 1; depth++) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      // npm sets its title ("npm run soak ..."); started as `node .../npm-cli.js`, the script is the second word.
      if (/^(\S*\/)?npm( |$)/.test(cmdline[0] ?? '') || /(^|\/)npm-cli\.js$/.test(cmdline[1] ?? '')) return pid;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {
      return undefined;
    }
  }
  return undefined;
}



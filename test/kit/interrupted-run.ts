import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { isAlive } from '../../tools/local-stack/processes';

export interface InterruptedRun {
  /** The run's exit code (null when a signal ended it). */
  code: number | null;
  /** The child process the run reported it had started. */
  childPid: number;
  output: string;
}

/**
 * Starts `node <args>` (a run that spawns a child and prints "child <pid>", then a line "running"),
 * sends it `signals` 200 ms apart once it runs, and waits (bounded) for it to exit and for the
 * kernel to reap its child if it killed it. For the tests that an interrupted run leaves no
 * process behind.
 */
export async function interruptRun(args: string[], signals: NodeJS.Signals[], cwd?: string): Promise<InterruptedRun> {
  const run = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  run.stdout.on('data', (d: Buffer) => (output += d.toString()));
  run.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  // A whole line: mocha's spec reporter prints suite titles first, and a title may contain the word.
  while (!/^running$/m.test(output) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const childPid = Number(/child (\d+)/.exec(output)?.[1]);
  assert.ok(childPid > 0, `the run started its child: ${output}`);
  assert.equal(isAlive(childPid), true, 'the child runs before the interruption');
  for (const signal of signals) {
    run.kill(signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  let hung: NodeJS.Timeout | undefined;
  const code = await Promise.race([exited, new Promise<'hung'>((resolve) => (hung = setTimeout(() => resolve('hung'), 20_000)))]);
  clearTimeout(hung);
  if (code === 'hung') run.kill('SIGKILL');
  assert.notEqual(code, 'hung', `the run exited: ${output}`);
  // The kill is sent before the exit; give the kernel a moment to reap it.
  for (let i = 0; i < 50 && isAlive(childPid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return { code: code as number | null, childPid, output };
}

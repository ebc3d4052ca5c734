import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// Every npm script runs TypeScript as `node --import tsx <file>`, never as `tsx <file>`. tsx's CLI
// relays a signal to its child and then waits 30 ms for the child to report it, twice; a child
// whose report is later than that (an event loop busy for 60 ms, which a loaded machine makes
// common) is killed with SIGKILL. Its Ctrl-C handler never runs: the demo stopped before draining,
// left its workers running and printed nothing more (a CI rehearsal's `npm start` test, at load 10).
// With the loader there is no process in between, and the handler runs. (Started through tsx's CLI
// instead, the fixture below printed nothing after Ctrl-C: killed while busy, in 3 of 3 tries.)

const FIXTURE = path.join(PROJECT_ROOT, 'test', 'fixtures', 'busy-signal-handler.ts');

/** What the fixture printed when started as `argv` in a group of its own and sent Ctrl-C once it ran for a while. */
async function outputAfterCtrlC(argv: string[]): Promise<string> {
  const child = spawn(argv[0]!, argv.slice(1), { cwd: PROJECT_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  let exited = false;
  const closed = new Promise<void>((resolve) => child.on('close', () => ((exited = true), resolve())));
  const deadline = Date.now() + 10_000;
  while (!output.includes('ready')) {
    if (exited || Date.now() > deadline) throw new Error(`the fixture never said ready: ${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await new Promise((r) => setTimeout(r, 600));
  process.kill(-child.pid!, 'SIGINT');
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 10_000);
  await closed;
  clearTimeout(timer);
  return output;
}

describe('npm scripts: Ctrl-C reaches the program, not a runner in between', function () {
  this.timeout(30_000);

  it('starts every TypeScript entry point through the tsx loader, not the tsx CLI', () => {
    const { scripts } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const throughCli = Object.entries(scripts).filter(([, command]) => /(^|&&|\|\||;|--|=\S*)\s*tsx\s/.test(command.replace(/--import tsx /g, '')));
    assert.deepEqual(throughCli, []);
  });

  it('a busy program started as `npm start` starts the demo drains on Ctrl-C', async () => {
    // The launcher of the start script (what precedes its entry file), with node as this process's.
    const { scripts } = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const launcher = scripts.start!.split(' tools/cli.ts')[0]!.split(' ');
    const output = await outputAfterCtrlC([launcher[0] === 'node' ? process.execPath : launcher[0]!, ...launcher.slice(1), FIXTURE]);
    assert.match(output, /draining\n[\s\S]*drained/);
  });
});

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isAlive } from '../../tools/local-stack/processes';

// A test run interrupted (Ctrl-C, a CI step's timeout) must not leave the worker processes its
// tests started running without a parent (test/kit/end-children-with-suite.ts, in .mocharc.cjs).
const root = path.join(__dirname, '..', '..');
const fixture = path.join(root, 'test', 'fixtures', 'suite-with-child.fixture.ts');
const mocharc = createRequire(__filename)(path.join(root, '.mocharc.cjs')) as { require: string[] };

async function interruptedRun(signal: NodeJS.Signals): Promise<{ code: number | null; childPid: number; output: string }> {
  const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
  // Only the module under test beside tsx: the suite's other require modules need a running stack.
  const args = [mocha, '--no-config', '--require', 'tsx/cjs', '--require', 'test/kit/end-children-with-suite.ts', '--timeout', '0', fixture];
  const run = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  run.stdout.on('data', (d: Buffer) => (output += d.toString()));
  run.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!output.includes('running') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const childPid = Number(/child (\d+)/.exec(output)?.[1]);
  assert.ok(childPid > 0, `the test started its child: ${output}`);
  assert.equal(isAlive(childPid), true, 'the child runs before the interruption');
  run.kill(signal);
  const code = await Promise.race([exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000))]);
  if (code === 'hung') run.kill('SIGKILL');
  assert.notEqual(code, 'hung', `mocha exited: ${output}`);
  for (let i = 0; i < 50 && isAlive(childPid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return { code: code as number | null, childPid, output };
}

describe('the test suite, interrupted, stops the processes its tests started', function () {
  this.timeout(60_000);

  it('is one of the suite\'s require modules', () => {
    assert.ok(mocharc.require.includes('test/kit/end-children-with-suite.ts'), `.mocharc.cjs requires: ${mocharc.require.join(', ')}`);
  });

  for (const [signal, exitCode] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it(`${signal}: mocha exits ${exitCode} and the test's child process is gone`, async () => {
      const { code, childPid, output } = await interruptedRun(signal);
      assert.equal(code, exitCode, output);
      assert.equal(isAlive(childPid), false, `child ${childPid} still running`);
    });
  }
});

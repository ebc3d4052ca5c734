import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { isAlive } from '../../tools/local-stack/processes';
import { interruptRun } from '../kit/interrupted-run';

// A test run interrupted (Ctrl-C, a CI step's timeout) must not leave the worker processes its
// tests started running without a parent (test/kit/end-children-with-suite.ts, in .mocharc.cjs).
const root = path.join(__dirname, '..', '..');
const fixture = path.join(root, 'test', 'fixtures', 'suite-with-child.fixture.ts');
const mocharc = createRequire(__filename)(path.join(root, '.mocharc.cjs')) as { require: string[] };

const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
// Only the module under test beside tsx: the suite's other require modules need a running stack.
const mochaArgs = [mocha, '--no-config', '--require', 'tsx/cjs', '--require', 'test/kit/end-children-with-suite.ts', '--timeout', '0', fixture];

describe('the test suite, interrupted, stops the processes its tests started', function () {
  this.timeout(60_000);

  it('is one of the suite\'s require modules', () => {
    assert.ok(mocharc.require.includes('test/kit/end-children-with-suite.ts'), `.mocharc.cjs requires: ${mocharc.require.join(', ')}`);
  });

  for (const [signal, exitCode] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    it(`${signal}: mocha exits ${exitCode} and the test's child process is gone`, async () => {
      const { code, childPid, output } = await interruptRun(mochaArgs, [signal], root);
      assert.equal(code, exitCode, output);
      assert.equal(isAlive(childPid), false, `child ${childPid} still running`);
    });
  }
});

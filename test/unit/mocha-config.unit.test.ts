import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { PROJECT_ROOT } from '../../config/env';

const FIXTURE = path.join('test', 'fixtures', 'only-marker.fixture.ts');

function runMocha(env: NodeJS.ProcessEnv) {
  return spawnSync(process.execPath, [require.resolve('mocha/bin/mocha.js'), FIXTURE], { cwd: PROJECT_ROOT, env, encoding: 'utf8' });
}

describe('mocha configuration (unit)', function () {
  this.timeout(60_000);

  it('on CI a committed .only fails the run', () => {
    const { status, stdout, stderr } = runMocha({ ...process.env, CI: 'true' });
    assert.notEqual(status, 0, stdout);
    assert.match(stdout + stderr, /`\.only` forbidden by --forbid-only/);
  });

  it('locally .only still works for debugging (the same file passes without CI)', () => {
    const env = { ...process.env };
    delete env.CI;
    const { status, stdout } = runMocha(env);
    assert.equal(status, 0, stdout);
    assert.match(stdout, /1 passing/);
  });
});

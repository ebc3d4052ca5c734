import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// A suite someone narrowed while debugging, written at run time into a scratch folder: no file
// of the repository may carry the marker itself (a committed one is exactly what CI must refuse).
const NARROWED_SUITE = `
describe('a suite someone narrowed while debugging', () => {
  it${'.only'}('the one test left running', () => undefined);
  it('a test that the marker would silently skip', () => undefined);
});
`;

describe('mocha configuration (unit)', function () {
  this.timeout(60_000);
  let dir: string;
  let fixture: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-mocha-'));
    fixture = path.join(dir, 'narrowed.fixture.js');
    fs.writeFileSync(fixture, NARROWED_SUITE);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  // The project's own .mocharc.cjs (found from cwd) decides forbidOnly, as in `npm test`.
  const runMocha = (env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, [require.resolve('mocha/bin/mocha.js'), fixture], { cwd: PROJECT_ROOT, env, encoding: 'utf8' });

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

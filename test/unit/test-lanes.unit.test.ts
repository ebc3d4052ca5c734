import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { allTestFiles, laneEnv, laneFolders, testFilesOutsideLanes } from '../../tools/scripts/test-lanes-plan';

// `npm test` runs the suite as two mocha processes (tools/scripts/test-lanes.ts): no file may fall
// between them, and the second may not take the first one's ports or timings file.
describe("npm test's two lanes", () => {
  it('puts every test file of the project in exactly one lane', () => {
    const files = allTestFiles(PROJECT_ROOT);
    assert.ok(files.length > 100, `found ${files.length} test files`);
    assert.deepEqual(testFilesOutsideLanes(PROJECT_ROOT), []);
    const folders = laneFolders();
    for (const file of files) assert.equal(folders.filter((f) => file.startsWith(`${f}/`)).length, 1, file);
  });

  it('names a test file in a folder no lane covers, so npm test refuses to run without it', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'lanes-'));
    try {
      for (const dir of ['test/e2e', 'test/unit', 'test/contract']) fs.mkdirSync(path.join(root, dir), { recursive: true });
      fs.writeFileSync(path.join(root, 'test/e2e/a.e2e.test.ts'), '');
      fs.writeFileSync(path.join(root, 'test/unit/b.unit.test.ts'), '');
      fs.writeFileSync(path.join(root, 'test/contract/c.contract.test.ts'), '');
      fs.writeFileSync(path.join(root, 'test/e2e/helper.ts'), '');
      assert.deepEqual(testFilesOutsideLanes(root), ['test/contract/c.contract.test.ts']);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it("moves the second lane's metrics ports and timings file, and leaves the first lane's environment as given", () => {
    const env = { MOCHA_TIMINGS_FILE: '.cache/timings/node24.json', PATH: '/bin' };
    assert.deepEqual(laneEnv(env, 'e2e', 0, 2), { MOCHA_TIMINGS_FILE: '.cache/timings/node24.e2e.json', PATH: '/bin' });
    assert.deepEqual(laneEnv(env, 'integration', 1, 2), { MOCHA_TIMINGS_FILE: '.cache/timings/node24.integration.json', PATH: '/bin', METRICS_PORT_BASE: '19700' });
    assert.equal(laneEnv({ METRICS_PORT_BASE: '29400' }, 'integration', 1, 2).METRICS_PORT_BASE, '29700');
    assert.equal(laneEnv({ METRICS_PORT_BASE: '0' }, 'integration', 1, 2).METRICS_PORT_BASE, '0', '0 (no metrics) stays off');
    assert.deepEqual(laneEnv(env, 'suite', 0, 1), env, 'one lane: the environment as given');
  });
});

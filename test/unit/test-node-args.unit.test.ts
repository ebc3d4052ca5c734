import assert from 'node:assert/strict';
import { CORE_SUBSET, ownNodeLine, testFilesFor, WHOLE_SUITE } from '../../tools/scripts/test-node';

// `npm run test:node -- <line> [--all | files…]`: what each form runs on the other Node line.
describe('test:node: what runs on another Node line', () => {
  it('runs the core subset by default, the given files when named, and the whole suite with --all', () => {
    assert.deepEqual(testFilesFor([]), CORE_SUBSET);
    assert.deepEqual(testFilesFor(['test/unit/a.unit.test.ts']), ['test/unit/a.unit.test.ts']);
    assert.deepEqual(testFilesFor(['--all']), WHOLE_SUITE);
    assert.deepEqual(WHOLE_SUITE, ['test/e2e/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/unit/**/*.test.ts'], "the files of npm test's lanes");
  });

  it('refuses --all together with test files', () => {
    assert.equal(testFilesFor(['--all', 'test/unit/a.unit.test.ts']), undefined);
  });

  it("names the machine's own line by its major version, so `test:node -- 20` runs on the machine's Node 20", () => {
    assert.equal(ownNodeLine('20.20.2'), '20');
    assert.equal(ownNodeLine(process.versions.node), String(Number(process.versions.node.split('.')[0])));
  });
});

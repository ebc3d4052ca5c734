import assert from 'node:assert/strict';
import path from 'node:path';
import { parseCircular, parseDependencyTree } from 'dpdm';

// No module of the library, its workers or the example imports itself back through others — type-only
// imports included. A type-only cycle costs nothing at run time, but it is how a contract comes to
// derive its types from the implementation it describes, and a later value import along the same
// path turns it into an undefined-at-load bug. ESLint's import-x/no-cycle skips type-only imports
// (by design: they have no run-time effect), so this test walks the graph with dpdm, which reads
// every import, `import type` included, and resolves tsconfig's paths as tsc does.

const ROOT = path.resolve(__dirname, '..', '..');
const FOLDERS = ['src', 'workflows', 'activities', 'workers', 'examples'];

describe('import cycles', function () {
  this.timeout(60_000);

  it(`there are none in ${FOLDERS.join('/, ')}/ (type-only imports included)`, async () => {
    const tree = await parseDependencyTree(
      FOLDERS.map((folder) => `${folder}/**/*.ts`),
      { context: ROOT, cwd: ROOT, tsconfig: path.join(ROOT, 'tsconfig.json'), transform: false, skipDynamicImports: false },
    );
    assert.ok(Object.keys(tree).some((file) => file.startsWith('workflows/relay/')), 'the walk reached the workflows');
    const cycles = parseCircular(tree).map((cycle) => [...cycle, cycle[0]].join(' → '));
    assert.deepEqual(cycles, [], `import cycles (break each one: move what both sides need into a module of its own, or let the contract own the type):\n${cycles.join('\n')}`);
  });
});

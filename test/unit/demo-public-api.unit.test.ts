import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { moduleSpecifiers } from './library-boundaries.unit.test';

// The example is a user of the package, as an adopter's service is: every file of examples/
// imports the public API (the package 'temporal-outbox' and its subpaths), other files of the
// example and outside libraries, never the modules behind the API. The demo alone also drives the
// local stack (tools/local-stack), which a service would not have.
const EXAMPLES = path.join(PROJECT_ROOT, 'examples');
const DEMO_HELPERS = ['tools/local-stack', 'tools/local-stack/child-processes', 'tools/local-stack/wait-for-workers'];

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? files(file) : e.name.endsWith('.ts') ? [file] : [];
  });
}

describe('the example uses only the public API', () => {
  const exampleFiles = files(EXAMPLES);

  it('sees every file of the example', () => {
    assert.ok(exampleFiles.length >= 15, `found ${exampleFiles.length}`);
    assert.ok(exampleFiles.some((f) => f.endsWith(path.join('payments', 'consumer-worker.ts'))));
  });

  for (const file of exampleFiles) {
    const name = path.relative(PROJECT_ROOT, file);
    it(name, () => {
      const specs = moduleSpecifiers(fs.readFileSync(file, 'utf8'));
      for (const spec of specs) {
        if (!spec.startsWith('.')) {
          assert.ok(!spec.startsWith('temporal-outbox/') || /^temporal-outbox\/[a-z-]+$/.test(spec), `${name} imports ${spec}, not a public subpath`);
          continue;
        }
        const target = path.relative(PROJECT_ROOT, path.resolve(path.dirname(file), spec));
        const inExample = target.split(path.sep)[0] === 'examples';
        const demoHelper = name.includes(`${path.sep}demo${path.sep}`) && DEMO_HELPERS.includes(target);
        assert.ok(inExample || demoHelper, `${name} imports ${spec} (${target}), which is not part of the public API`);
      }
    });
  }
});

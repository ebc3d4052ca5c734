import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../config/env';

// `npm start` is a user of the package: the demo command and its own helper modules import the
// public API (api/) and outside libraries only, never the modules behind the API.
const DEMO_MODULES = ['cli/commands/demo.ts', 'app/account-balance-check.ts', 'app/child-processes.ts', 'app/demo-traffic.ts', 'app/pipeline-stats.ts', 'app/wait-for-workers.ts'];

describe('the demo uses only the public API', () => {
  for (const file of DEMO_MODULES) {
    it(file, () => {
      const source = fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
      const imports = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]!).filter((spec) => spec.startsWith('.'));
      assert.ok(imports.length > 0 || file.includes('wait-for-workers') || file.includes('child-processes'), 'the check sees the imports');
      for (const spec of imports) {
        const target = path.relative(PROJECT_ROOT, path.resolve(path.dirname(path.join(PROJECT_ROOT, file)), spec));
        const allowed = target === 'api' || target.startsWith(`api${path.sep}`) || DEMO_MODULES.includes(`${target}.ts`);
        assert.ok(allowed, `${file} imports ${spec} (${target}), which is not part of the public API`);
      }
    });
  }
});

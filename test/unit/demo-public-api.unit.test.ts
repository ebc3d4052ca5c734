import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// `npm start` is a user of the package: the demo command and its own helper modules import the
// public API (the package 'temporal-outbox'), the local stack and outside libraries only, never the modules behind the API.
const DEMO_MODULES = ['examples/payments/demo/demo-command.ts', 'examples/payments/demo/account-balance-check.ts', 'tools/local-stack/child-processes.ts', 'examples/payments/demo/demo-traffic.ts', 'examples/payments/demo/pipeline-stats.ts', 'tools/local-stack/wait-for-workers.ts', 'examples/migrate.ts'];

describe('the demo uses only the public API', () => {
  for (const file of DEMO_MODULES) {
    it(file, () => {
      const source = fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
      const specs = [...source.matchAll(/from '([^']+)'/g)].map((m) => m[1]!);
      // The package itself is imported by its name ('temporal-outbox'), as an adopter's service does.
      assert.ok(specs.length > 0, 'the check sees the imports');
      const imports = specs.filter((spec) => spec.startsWith('.'));
      for (const spec of imports) {
        const target = path.relative(PROJECT_ROOT, path.resolve(path.dirname(path.join(PROJECT_ROOT, file)), spec));
        const allowed = target === path.join('tools', 'local-stack') || DEMO_MODULES.includes(`${target}.ts`);
        assert.ok(allowed, `${file} imports ${spec} (${target}), which is not part of the public API`);
      }
    });
  }
});

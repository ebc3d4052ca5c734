import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// docs/adopting.md's table of migrations is what a team copying the SQL into its own migration
// tool goes by: a migration it does not name is one they would miss.
describe('docs/adopting.md names every migration', () => {
  it('has a row for every file in migrations/, and none for a file that is gone', () => {
    const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'adopting.md'), 'utf8');
    const files = fs.readdirSync(path.join(PROJECT_ROOT, 'migrations')).filter((f) => f.endsWith('.sql'));
    assert.ok(files.length > 0);
    const missing = files.filter((f) => !doc.includes(`\`${f}\``));
    assert.deepEqual(missing, [], `docs/adopting.md does not name ${missing.join(', ')}`);
    const named = [...doc.matchAll(/`(\d{4}_[a-z0-9_]+\.sql)`/g)].map((m) => m[1]!);
    const stale = [...new Set(named.filter((f) => !files.includes(f)))];
    assert.deepEqual(stale, [], `docs/adopting.md names migrations that do not exist: ${stale.join(', ')}`);
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// The README's map of where each feature lives is only useful while it is true: every file or
// folder it names must exist (a move that forgets the README fails here).

function featureTable(): string {
  const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf('## Where each feature lives');
  assert.ok(start >= 0, 'README has the section');
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end);
}

describe('README: where each feature lives', () => {
  it('opens with a picture of the architecture', () => {
    const readme = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    const picture = readme.indexOf('```mermaid');
    assert.ok(picture > 0 && picture < readme.indexOf('\n## '), 'a Mermaid diagram before the first section');
    for (const part of ['outbox_events', 'inbox_processed_events', 'relayShardWorkflow', 'applyEventsWorkflow', 'retentionWorkflow', 'reconciliationWorkflow', 'payments.events']) {
      assert.ok(readme.slice(picture, readme.indexOf('```', picture + 3)).includes(part), `the picture names ${part}`);
    }
  });

  it('names only files and folders that exist', () => {
    const rows = featureTable().split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| feature'));
    assert.ok(rows.length >= 10, `a row per feature (found ${rows.length})`);
    const named = rows.flatMap((row) => [...row.matchAll(/`([A-Za-z0-9_.\-/]+\/[A-Za-z0-9_.\-/]*)`/g)].map((m) => m[1]!));
    const paths = named.filter((p) => !p.includes('*') && !p.startsWith('temporal-outbox/'));
    assert.ok(paths.length >= 30, `paths found: ${paths.length}`);
    const missing = paths.filter((p) => !fs.existsSync(path.join(PROJECT_ROOT, p)));
    assert.deepEqual(missing, []);
  });
});

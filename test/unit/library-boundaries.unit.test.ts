import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';

// The library (what the package ships: src/, workers/, activities/, workflows/) knows nothing of
// the repository's tooling or of the example: a service installing it gets neither the local
// stack's credentials nor the payments demo.
const LIBRARY = ['src', 'workers', 'activities', 'workflows'];
const FORBIDDEN = ['tools', 'examples', 'test'];

function typescriptFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? typescriptFiles(file) : e.name.endsWith('.ts') ? [file] : [];
  });
}

/** Every module specifier a file names: imports, re-exports, require and require.resolve. */
export function moduleSpecifiers(source: string): string[] {
  return [...source.matchAll(/(?:from\s+|import\s*\(\s*|require(?:\.resolve)?\(\s*|^import\s+)'([^']+)'/gm)].map((m) => m[1]!);
}

describe('the library imports nothing of the tooling or the example', () => {
  const files = LIBRARY.flatMap((dir) => typescriptFiles(path.join(PROJECT_ROOT, dir)));

  it('sees the library', () => {
    assert.ok(files.length > 100, `found ${files.length} files`);
    assert.ok(moduleSpecifiers("import { x } from '../../tools/a';\nconst b = require.resolve('../examples/b');").length === 2, 'the check sees imports and require.resolve');
  });

  it('no file under src/, workers/, activities/ or workflows/ reaches tools/, examples/ or test/', () => {
    const offenders: string[] = [];
    for (const file of files) {
      for (const spec of moduleSpecifiers(fs.readFileSync(file, 'utf8'))) {
        if (!spec.startsWith('.')) continue;
        const top = path.relative(PROJECT_ROOT, path.resolve(path.dirname(file), spec)).split(path.sep)[0]!;
        if (FORBIDDEN.includes(top)) offenders.push(`${path.relative(PROJECT_ROOT, file)} → ${spec}`);
      }
    }
    assert.deepEqual(offenders, []);
  });
});

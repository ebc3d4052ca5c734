import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compileProject } from '../kit/compiled-build';

// The suite's worker processes run from test/kit/compiled-build.ts's build: it must resolve the
// library by its package name, as the example imports it, find the SQL beside the code, and
// never run code older than the sources.
describe('the compiled build the suite starts its processes from', () => {
  let root: string;
  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  const run = (build: string, file: string) => spawnSync(process.execPath, [path.join(build, file)], { encoding: 'utf8', timeout: 30_000 });

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-compiled-build-'));
    write('tsconfig.json', '{}');
    write('src/index.ts', "export const version: number = 1;\n");
    write('src/api/outbox.ts', "export const api: string = 'outbox';\n");
    write('migrations/0001_first.sql', 'SELECT 1;\n');
    write(
      'examples/payments/service.ts',
      "import fs from 'node:fs';\nimport path from 'node:path';\nimport { version } from 'temporal-outbox';\nimport { api } from 'temporal-outbox/outbox';\n" +
        "console.log(JSON.stringify({ version, api, migrations: fs.readdirSync(path.join(__dirname, '..', '..', 'migrations')) }));\n",
    );
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('runs the example against the library by its package name, with the migrations beside it', () => {
    const build = compileProject(root, path.join(root, '.cache', 'compiled'));
    const out = run(build, 'examples/payments/service.js');
    assert.equal(out.status, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), { version: 1, api: 'outbox', migrations: ['0001_first.sql'] });
  });

  it('builds again after a source changed, and reuses the build while none did', () => {
    const builds = path.join(root, '.cache', 'compiled');
    const first = compileProject(root, builds);
    assert.equal(compileProject(root, builds), first, 'unchanged sources reuse the build');
    write('src/index.ts', 'export const version: number = 2;\n');
    const second = compileProject(root, builds);
    assert.notEqual(second, first);
    assert.equal((JSON.parse(run(second, 'examples/payments/service.js').stdout) as { version: number }).version, 2);
  });

  it('names the file when the sources do not compile', () => {
    write('src/index.ts', 'export const version = ;\n');
    assert.throws(() => compileProject(root, path.join(root, '.cache', 'compiled')), /compiling the sources[\s\S]*src\/index\.ts/);
  });
});

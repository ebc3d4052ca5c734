import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../../config/env';
import { SUITE } from '../../bench/suite/benchmarks';
import { TARGETS } from '../../bench/suite/targets';

// `npm run bench -- --quick`, the CI smoke of the benchmark suite, end to end on the real stack:
// every benchmark that exists runs at its quick size and writes its results, the one that does
// not exist yet is skipped with a line saying so, and the measured table is generated from what
// was written — into a folder of the test's own, leaving README.md and bench/results alone.

let suite: ReturnType<typeof spawn> | undefined;

function runSuite(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = (suite = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(PROJECT_ROOT, 'bench', 'suite', 'run-suite.ts'), ...args], { cwd: PROJECT_ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}

describe('npm run bench -- --quick (the benchmark suite, smoke size)', function () {
  this.timeout(15 * 60_000);
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-suite-'));
  });
  after(() => {
    // A suite still running (the test timed out) would go on writing into the removed folder.
    if (suite && suite.exitCode === null) suite.kill('SIGTERM');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('runs every benchmark that exists, writes each one’s results and the table from them', async () => {
    const present = SUITE.filter((b) => fs.existsSync(path.join(PROJECT_ROOT, b.file)));
    const absent = SUITE.filter((b) => !present.includes(b));
    const readmeBefore = fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8');
    const started = Date.now();
    assert.deepEqual(fs.readdirSync(dir), [], 'the results folder starts empty');

    const { code, output } = await runSuite(['--quick', '--results-dir', dir]);
    assert.equal(code, 0, output.slice(-4000));

    for (const b of present) {
      const file = path.join(dir, `${b.resultFile}.json`);
      assert.ok(fs.existsSync(file), `${b.name} wrote no ${b.resultFile}.json:\n${output.slice(-3000)}`);
      const written = JSON.parse(fs.readFileSync(file, 'utf8')) as { machine: { at: string } };
      assert.ok(Date.parse(written.machine.at) >= started, `${b.resultFile}.json is not from this run`);
    }
    for (const b of absent) assert.match(output, new RegExp(`=== ${b.name}: skipped — ${b.file} does not exist yet`));

    // One row per target; every target measured by a benchmark of the suite has a verdict.
    const table = fs.readFileSync(path.join(dir, 'measured.md'), 'utf8');
    const rows = table.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| BRIEF target'));
    assert.equal(rows.length, TARGETS.length);
    const produced = new Set(present.map((b) => b.resultFile));
    TARGETS.forEach((t, i) => {
      if (produced.has(t.file)) assert.match(rows[i]!, /\| \*\*(met|not met)\*\* \|/, `no verdict for "${t.target}"`);
    });
    assert.equal(fs.readFileSync(path.join(PROJECT_ROOT, 'README.md'), 'utf8'), readmeBefore, 'the quick mode must not rewrite README.md');
  });
});

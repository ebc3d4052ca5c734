import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { nodeScript } from '../kit/compiled-build';

// A worker process's last word goes to its log: an error nothing handled is logged through the
// worker's logger, with the error, before the process exits 1 (workers/run-main.ts).
describe('runWorkerMain: an error nothing handled', () => {
  it('is logged through the worker logger with the error, then the process exits 1', () => {
    const fixture = path.join(__dirname, '..', 'fixtures', 'worker-unhandled-rejection.ts');
    const run = spawnSync(process.execPath, nodeScript(fixture), { encoding: 'utf8', timeout: 60_000, env: { ...process.env, LOG_LEVEL: 'info' } });
    assert.equal(run.status, 1, `exit code; stderr: ${run.stderr}`);
    const lines = run.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { name?: string; level?: number; msg?: string; err?: { message?: string; stack?: string } });
    const last = lines.find((l) => l.msg?.includes('promise rejection nothing handled'));
    assert.ok(last, `a log line for it; stdout: ${run.stdout}`);
    assert.equal(last.name, 'test-worker');
    assert.equal(last.level, 50, 'logged as an error');
    assert.equal(last.err?.message, 'a mark failed while nobody awaited it');
    assert.match(last.err?.stack ?? '', /worker-unhandled-rejection/);
  });
});

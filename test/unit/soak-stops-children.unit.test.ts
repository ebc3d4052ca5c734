import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { isAlive } from '../../tools/local-stack/processes';
import { nodeScript } from '../kit/compiled-build';

// `npm run soak -- --network` interrupted must not leave its worker processes running
// (tools/soak/stop-on-signals.ts): a run built on the kit, sent SIGTERM or SIGINT, exits with
// 143/130 and no child it spawned is still alive.
const fixture = path.join(__dirname, '..', 'fixtures', 'soak-with-children.ts');


async function interrupt(signals: NodeJS.Signals[], args: string[] = []): Promise<{ code: number | null; childPid: number; output: string }> {
  const run = spawn(process.execPath, [...nodeScript(fixture), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  run.stdout.on('data', (d: Buffer) => (output += d.toString()));
  run.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => run.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!output.includes('running') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  const childPid = Number(/child (\d+)/.exec(output)?.[1]);
  assert.ok(childPid > 0, `the run started its child: ${output}`);
  for (const signal of signals) {
    run.kill(signal);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const code = await Promise.race([exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 20_000))]);
  if (code === 'hung') run.kill('SIGKILL');
  assert.notEqual(code, 'hung', `the run exited: ${output}`);
  // The kill is sent before the exit; give the kernel a moment to reap it.
  for (let i = 0; i < 50 && isAlive(childPid); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return { code: code as number | null, childPid, output };
}

describe('network soak: interrupted, it stops what it started', function () {
  this.timeout(60_000);

  it('SIGTERM: exits 143 and its child process is gone', async () => {
    const { code, childPid, output } = await interrupt(['SIGTERM']);
    assert.equal(code, 143, output);
    assert.equal(isAlive(childPid), false, `child ${childPid} still running`);
  });

  it('SIGINT twice while its stop hangs: exits 130 at once and its child process is gone', async () => {
    const { code, childPid, output } = await interrupt(['SIGINT', 'SIGINT'], ['stuck']);
    assert.equal(code, 130, output);
    assert.equal(isAlive(childPid), false, `child ${childPid} still running`);
  });
});

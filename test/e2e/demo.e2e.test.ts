import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { loadConfig, PROJECT_ROOT } from '../../config/env';

// The README's main command, run as written (with a duration so it ends by itself): it brings up
// the stack, starts the workers, relay shards and retention schedule, sends demo payments, and
// exits 0 only if every confirmed payment ended up credited exactly once.
describe('npm start (the README\'s main command)', function () {
  this.timeout(400_000);

  it('runs the whole pipeline live and every confirmed payment is credited exactly once', async () => {
    const child = spawn('npm', ['start', '--', '--duration', '20', '--rate', '30'], { cwd: PROJECT_ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    assert.equal(code, 0, output);
    assert.match(output, new RegExp(`Temporal UI: ${loadConfig().temporal.uiUrl.replace(/[.]/g, '\\.')}`));
    assert.match(output, /relay-worker started .*\n.*consumer-worker started .*\n.*retention-worker started/);
    assert.match(output, /retention schedule outbox-retention: (created|updated)/);
    const sent = Number(/traffic stopped after (\d+) payments/.exec(output)?.[1]);
    assert.ok(sent > 0, 'demo traffic flowed');
    assert.match(output, /all \d+ confirmed payments are credited exactly once: balances total (\d+) = confirmed total \1/);
  });
});

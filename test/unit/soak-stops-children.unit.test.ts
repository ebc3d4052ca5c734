import assert from 'node:assert/strict';
import path from 'node:path';
import { isAlive } from '../../tools/local-stack/processes';
import { nodeScript } from '../kit/compiled-build';
import { interruptRun } from '../kit/interrupted-run';

// `npm run soak -- --network` interrupted must not leave its worker processes running
// (tools/soak/stop-on-signals.ts): a run built on the kit, sent SIGTERM or SIGINT, exits with
// 143/130 and no child it spawned is still alive.
const fixture = path.join(__dirname, '..', 'fixtures', 'soak-with-children.ts');
const interrupt = (signals: NodeJS.Signals[], args: string[] = []) => interruptRun([...nodeScript(fixture), ...args], signals);

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

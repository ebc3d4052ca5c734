import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { withBuildLock } from '../../tools/local-stack/build-lock';

// CI builds the Schema Registry in the background while the suite runs; the registry test that
// comes first must wait for that build, not start a second one into the same folder.
describe('build lock: one build of a cached artefact at a time', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-lock-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('makes a second builder wait for the first and then see its result, so the build runs once', async () => {
    const artefact = path.join(dir, 'artefact');
    let builds = 0;
    let waited = 0;
    const build = async () => {
      if (fs.existsSync(artefact)) return 'reused';
      builds += 1;
      await new Promise((r) => setTimeout(r, 1_500));
      fs.writeFileSync(artefact, 'done');
      return 'built';
    };
    const first = withBuildLock(dir, 'a test artefact', build);
    await new Promise((r) => setTimeout(r, 100));
    const second = withBuildLock(dir, 'a test artefact', build, { onWait: () => (waited += 1) });
    assert.deepEqual(await Promise.all([first, second]), ['built', 'reused']);
    assert.equal(builds, 1);
    assert.equal(waited, 1, 'the second caller reported that it waited');
    assert.equal(fs.existsSync(path.join(dir, 'build.lock')), false, 'the lock is released');
  });

  it('takes over a lock whose builder died, and releases the lock when the build throws', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    fs.mkdirSync(path.join(dir, 'build.lock'));
    fs.writeFileSync(path.join(dir, 'build.lock', 'pid'), dead);
    const t0 = Date.now();
    await assert.rejects(
      withBuildLock(dir, 'a test artefact', () => {
        throw new Error('mvn failed');
      }, { timeoutMs: 5_000 }),
      /mvn failed/,
    );
    assert.ok(Date.now() - t0 < 1_000, 'the dead builder’s lock was taken at once');
    assert.equal(fs.existsSync(path.join(dir, 'build.lock')), false);
  });

  it('gives up after its bound while a live process holds the lock, naming the lock to remove', async () => {
    fs.mkdirSync(path.join(dir, 'build.lock'));
    fs.writeFileSync(path.join(dir, 'build.lock', 'pid'), String(process.pid));
    await assert.rejects(withBuildLock(dir, 'a test artefact', () => 'never', { timeoutMs: 1_500 }), /gave up waiting for another process \(pid \d+\) building a test artefact; remove .*build\.lock/);
  });
});

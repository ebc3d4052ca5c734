import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { watchLinks, type LinkProbe } from '../../workers/link-health';

// The health check steps aside on a link that is failing, not on a late probe
// (docs/guarantees.md#stepping-aside): `failures` failed probes in a row AND `failingForMs` of failing.
const settings = { intervalMs: 20, timeoutMs: 40, failures: 3, failingForMs: 300 };

async function watch(probe: LinkProbe, forMs: number): Promise<number[]> {
  const downs: number[] = [];
  const stop = new AbortController();
  const started = Date.now();
  const watching = watchLinks({ link: probe }, settings, { down: () => (downs.push(Date.now() - started), true), up: () => undefined }, stop.signal);
  await sleep(forMs);
  stop.abort();
  await watching;
  return downs;
}

describe('link health: when a worker steps aside', () => {
  it('never on probes that fail one round in two (late answers on a busy worker)', async () => {
    let round = 0;
    const downs = await watch(async () => {
      if (round++ % 2 === 0) throw new Error('late');
    }, 800);
    assert.deepEqual(downs, []);
  });

  it('never on three quick failures in a row that then pass (less than the time budget)', async () => {
    let round = 0;
    const downs = await watch(async () => {
      if (round++ % 6 < 3) throw new Error('refused');
    }, 800);
    assert.deepEqual(downs, []);
  });

  it('on a link that keeps failing, once it has failed for the time budget', async () => {
    const downs = await watch(async () => {
      throw new Error('refused');
    }, 800);
    assert.equal(downs.length, 1);
    assert.ok(downs[0]! >= settings.failingForMs, `down after ${downs[0]} ms, not before ${settings.failingForMs} ms`);
  });

  it('on a link that stops answering (each probe timing out), after the failures in a row', async () => {
    const downs = await watch(() => new Promise(() => undefined), 800);
    assert.equal(downs.length, 1);
    assert.ok(downs[0]! >= settings.failingForMs && downs[0]! >= settings.failures * settings.timeoutMs);
  });
});

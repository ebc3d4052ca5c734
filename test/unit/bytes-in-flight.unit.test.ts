import assert from 'node:assert/strict';
import { BytesInFlight } from '../../activities/relay/bytes-in-flight';

const settled = async <T>(p: Promise<T>) => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('BytesInFlight (row bodies one relay worker holds at once)', () => {
  it('lets batches in while they fit, holds the next one until enough is released', async () => {
    const budget = new BytesInFlight(100);
    const a = await budget.acquire(60);
    const b = await budget.acquire(40);
    assert.equal(budget.inFlight, 100);
    const c = budget.acquire(30);
    assert.equal(await settled(c), false, 'over the limit: waits');
    a();
    assert.equal(await settled(c), true, 'fits once the first batch is released');
    assert.equal(budget.inFlight, 70);
    b();
    (await c)();
    assert.equal(budget.inFlight, 0);
  });

  it('lets a batch over the limit alone go once nothing else is in flight, and counts a release once', async () => {
    const budget = new BytesInFlight(100);
    const small = await budget.acquire(10);
    const big = budget.acquire(500);
    assert.equal(await settled(big), false);
    small();
    small();
    assert.equal(await settled(big), true);
    assert.equal(budget.inFlight, 500);
  });
});

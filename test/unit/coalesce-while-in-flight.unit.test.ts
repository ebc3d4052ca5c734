import assert from 'node:assert/strict';
import { CoalesceWhileInFlight } from '../../activities/relay/coalesce-while-in-flight';

/** A round trip the test finishes by hand, recording what each one carried. */
function manualRoundTrips() {
  const trips: { inputs: number[][]; finish: (err?: Error) => void }[] = [];
  const run = (inputs: number[][]) =>
    new Promise<number[]>((resolve, reject) => {
      trips.push({ inputs, finish: (err) => (err ? reject(err) : resolve(inputs.map((ids) => ids.reduce((a, b) => a + b, 0)))) });
    });
  const coalescer = new CoalesceWhileInFlight<number[], number>(run, async (ids) => (await run([ids]))[0]!, { weight: (ids) => ids.length, smallWeight: 4, maxWeight: 6 });
  return { trips, coalescer };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('CoalesceWhileInFlight (group commit of the relay shards’ round trips)', () => {
  it('gathers the calls of one turn into one round trip', async () => {
    const { trips, coalescer } = manualRoundTrips();
    const calls = [coalescer.call([1]), coalescer.call([2])];
    assert.equal(trips.length, 0);
    await turn();
    assert.deepEqual(trips[0]!.inputs, [[1], [2]]);
    trips[0]!.finish();
    assert.deepEqual(await Promise.all(calls), [1, 2]);
  });

  it('sends a lone call at the end of its turn, and the calls made while it flies together in the next round trip', async () => {
    const { trips, coalescer } = manualRoundTrips();
    const first = coalescer.call([1]);
    await turn();
    assert.equal(trips.length, 1, 'nothing in flight: leaves at the end of the turn');
    const second = coalescer.call([2, 3]);
    const third = coalescer.call([4]);
    await turn();
    assert.equal(trips.length, 1, 'one round trip in flight at a time');
    trips[0]!.finish();
    assert.equal(await first, 1);
    await turn();
    assert.deepEqual(trips[1]!.inputs, [[2, 3], [4]], 'the two waiting calls share one round trip');
    trips[1]!.finish();
    assert.deepEqual(await Promise.all([second, third]), [5, 4], 'each caller gets its own result');
  });

  it('sends a large call on its own, beside a flight in progress', async () => {
    const { trips, coalescer } = manualRoundTrips();
    void coalescer.call([1]);
    await turn();
    const large = coalescer.call([1, 1, 1, 1, 1]);
    assert.equal(trips.length, 2, 'a call of smallWeight or more does not wait');
    trips[1]!.finish();
    assert.equal(await large, 5);
  });

  it('gathers no more than maxWeight into one round trip', async () => {
    const { trips, coalescer } = manualRoundTrips();
    void coalescer.call([0]);
    await turn();
    const waiting = [coalescer.call([1, 1, 1]), coalescer.call([2, 2, 2]), coalescer.call([3])];
    trips[0]!.finish();
    await turn();
    assert.deepEqual(trips[1]!.inputs, [[1, 1, 1], [2, 2, 2]]);
    trips[1]!.finish();
    await turn();
    assert.deepEqual(trips[2]!.inputs, [[3]]);
    trips[2]!.finish();
    assert.deepEqual(await Promise.all(waiting), [3, 6, 3]);
  });

  it('fails every call a failed round trip carried, and goes on with the next', async () => {
    const { trips, coalescer } = manualRoundTrips();
    void coalescer.call([0]);
    await turn();
    const a = coalescer.call([1]);
    const b = coalescer.call([2]);
    trips[0]!.finish();
    await turn();
    trips[1]!.finish(new Error('connection reset'));
    await assert.rejects(a, /connection reset/);
    await assert.rejects(b, /connection reset/);
    const c = coalescer.call([7]);
    await turn();
    assert.equal(trips.length, 3, 'the failure leaves nothing in flight');
    trips[2]!.finish();
    assert.equal(await c, 7);
  });
});

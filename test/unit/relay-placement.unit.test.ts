import assert from 'node:assert/strict';
import { placeShards, type LiveRelayWorker } from '../../outbox/relay-placement';

const worker = (i: number): LiveRelayWorker => ({ workerId: `host-${1000 + i}-abcd`, taskQueue: `outbox-relay/host-${1000 + i}-abcd` });
const loads = (placement: (LiveRelayWorker | undefined)[]) => {
  const by = new Map<string, number>();
  for (const w of placement) by.set(w!.workerId, (by.get(w!.workerId) ?? 0) + 1);
  return [...by.values()];
};

describe('placeShards (which relay worker runs which shard)', () => {
  it('places nothing when no worker is live', () => {
    assert.deepEqual(placeShards(3, []), [undefined, undefined, undefined]);
  });

  it('never gives a worker more than ⌈shards/workers⌉, for every worker set up to 12 and shard counts up to 32', () => {
    for (let shards = 1; shards <= 32; shards++) {
      for (let n = 1; n <= 12; n++) {
        const workers = Array.from({ length: n }, (_, i) => worker(i * 7 + shards));
        const placement = placeShards(shards, workers);
        assert.equal(placement.filter(Boolean).length, shards);
        assert.ok(Math.max(...loads(placement)) <= Math.ceil(shards / n), `${shards} shards on ${n} workers: ${loads(placement)}`);
        // Every worker gets work once there are at least as many shards as workers.
        if (shards >= n) assert.equal(loads(placement).length, n, `${shards} shards on ${n} workers: someone idle`);
      }
    }
  });

  it('is the same whatever order the live list comes in (every reader agrees)', () => {
    const workers = [worker(1), worker(2), worker(3)];
    assert.deepEqual(placeShards(8, workers), placeShards(8, [...workers].reverse()));
  });

  it('keeps most shards where they were when a worker joins or leaves', () => {
    let moved = 0;
    let cases = 0;
    for (let seed = 0; seed < 50; seed++) {
      const three = [worker(seed * 3), worker(seed * 3 + 1), worker(seed * 3 + 2)];
      const before = placeShards(8, three.slice(0, 2)).map((w) => w!.workerId);
      const after = placeShards(8, three).map((w) => w!.workerId);
      moved += before.filter((id, i) => id !== after[i]).length;
      cases += 1;
    }
    // The third worker must take ⌊8/3⌋ = 2 or 3 shards; moving far more than that would be churn.
    assert.ok(moved / cases <= 4, `on average ${moved / cases} of 8 shards moved when a third worker joined`);
  });
});

import assert from 'node:assert/strict';
import { createPlaceRelayShard } from '../../activities/relay/place-relay-shard';
import { RelayWorkerRegistry } from '../../activities/relay/worker-registry';
import { placeShard } from '../../src/outbox/relay-placement';
import { createTestDatabase, type TestDatabase } from '../kit/database';

// A shard whose session on worker A timed out leaves A out of its placements, and takes it back as
// soon as A reports, through its lease renewal, that its links have answered since after that
// session was placed; not while A's links still fail (src/outbox/relay-avoidance.ts). Real
// PostgreSQL: the renewal's statement, the placement's read and the database's clock.
describe('relay placement: a worker the shard stopped trusting, with real lease renewals', () => {
  let db: TestDatabase;
  const queue = 'avoidance-tq';
  const registries: RelayWorkerRegistry[] = [];

  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    for (const r of registries) await r.leave();
    await db?.drop();
  });

  it('leaves A out while its links fail, and places on it again once they answer', async () => {
    let aLinksOkForMs: number | null = 60_000;
    const a = new RelayWorkerRegistry(db.pool, queue, 'worker-a', () => aLinksOkForMs);
    const b = new RelayWorkerRegistry(db.pool, queue, 'worker-b');
    registries.push(a, b);
    await a.join();
    await b.join();
    const place = createPlaceRelayShard({ pool: db.pool, registry: b });
    // A shard that A holds when both are live.
    const shardIndex = [0, 1, 2, 3, 4, 5, 6, 7].find((i) => placeShard(i, 8, [{ workerId: 'worker-a', taskQueue: 'a' }, { workerId: 'worker-b', taskQueue: 'b' }])?.workerId === 'worker-a')!;
    const first = await place({ shardIndex, shardCount: 8 });
    assert.equal(first.workerId, 'worker-a');
    assert.ok(first.readAt !== undefined);
    // Its session on A timed out: the workflow avoids A since that placement.
    const avoidance = { avoid: ['worker-a'], avoidSince: { 'worker-a': first.readAt! } };
    assert.equal((await place({ shardIndex, shardCount: 8, ...avoidance })).workerId, 'worker-b', 'A healthy since before the session: still left out');

    aLinksOkForMs = null;
    await a.refresh();
    await (a as unknown as { beat(): Promise<void> }).beat();
    assert.equal((await place({ shardIndex, shardCount: 8, ...avoidance })).workerId, 'worker-b', 'A with a link failing: left out');
    await b.refresh();
    assert.equal(b.owns(shardIndex, 8, avoidance), true, 'B keeps the shard meanwhile');

    await new Promise((resolve) => setTimeout(resolve, 50));
    aLinksOkForMs = 10;
    await (a as unknown as { beat(): Promise<void> }).beat();
    assert.equal((await place({ shardIndex, shardCount: 8, ...avoidance })).workerId, 'worker-a', 'A healthy again since after the session was placed: taken back');
    await b.refresh();
    assert.equal(b.owns(shardIndex, 8, avoidance), false, "B's session sees the shard is A's again");
  });
});

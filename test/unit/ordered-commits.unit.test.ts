import assert from 'node:assert/strict';
import { OrderedCommits, type PartitionOffset } from '../../inbox/ordered-commits';

// The ledger that lets the consumer fetch ahead of its commits (inbox/ordered-commits.ts): the
// chunks' applies are driven by hand here (each is a promise the test settles), and the commits
// are recorded, so the order of applies and of committed offsets is what is asserted.

/** One apply the test finishes by hand: which chunks (by last offset) it got. */
interface Apply {
  items: number[];
  finish(applied: boolean): void;
}

function ledgerUnderTest(opts: { maxEventsPerApply?: number; commit?: (offsets: PartitionOffset[]) => Promise<void> } = {}) {
  const applies: Apply[] = [];
  const commits: PartitionOffset[][] = [];
  const ledger = new OrderedCommits<number>({
    apply: (items) => new Promise<boolean>((resolve) => applies.push({ items, finish: resolve })),
    maxEventsPerApply: opts.maxEventsPerApply ?? 1_000,
    commitOffsets:
      opts.commit ??
      (async (offsets) => {
        commits.push(offsets);
      }),
    onCommitFailed: () => undefined,
  });
  const add = (partition: number, lastOffset: number, events = 10) => ledger.add({ topic: 't', partition, lastOffset: String(lastOffset), events, item: lastOffset });
  return { ledger, applies, commits, add };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('ordered commits (the consumer fetching ahead)', () => {
  it('applies a partition\'s chunks one apply after another, in offset order, while other partitions go on', async () => {
    const { applies, add } = ledgerUnderTest();
    const a = add(0, 99);
    add(0, 199);
    add(1, 49);
    await tick();
    assert.deepEqual(applies.map((x) => x.items), [[99], [49]], 'the second chunk of partition 0 waits for the first; partition 1 does not');
    applies[0]!.finish(true);
    await a;
    await tick();
    assert.deepEqual(applies.map((x) => x.items), [[99], [49], [199]]);
  });

  it('applies the chunks that waited meanwhile together, up to the batch size', async () => {
    const { applies, add } = ledgerUnderTest({ maxEventsPerApply: 25 });
    const a = add(0, 9);
    for (const last of [19, 29, 39, 49]) add(0, last);
    await tick();
    applies[0]!.finish(true);
    await a;
    await tick();
    assert.deepEqual(applies.map((x) => x.items), [[9], [19, 29]], 'two waiting chunks of 10 fit in 25, the third does not');
  });

  it('commits a partition only past applied chunks, the next offset to read, never moving back', async () => {
    const { ledger, applies, commits, add } = ledgerUnderTest();
    const a = add(0, 99);
    const b = add(0, 199);
    await tick();
    assert.equal(commits.length, 0, 'nothing is committed before an apply finished');
    applies[0]!.finish(true);
    await a;
    await ledger.flush();
    assert.deepEqual(commits.flat(), [{ topic: 't', partition: 0, offset: '100' }]);
    await tick();
    applies[1]!.finish(true);
    await b;
    await ledger.flush();
    assert.deepEqual(commits.flat().map((c) => c.offset), ['100', '200']);
  });

  it('gives up the chunks behind one that was given up, and commits none of them', async () => {
    const { ledger, applies, commits, add } = ledgerUnderTest();
    const a = add(0, 99);
    const b = add(0, 199);
    await tick();
    applies[0]!.finish(false);
    assert.equal(await a, false);
    assert.equal(await b, false);
    assert.equal(applies.length, 1, 'a chunk after a gap is never applied');
    await ledger.flush();
    assert.equal(commits.length, 0);
    assert.equal(ledger.held, 0);
  });

  it('forgets the old generation at a rebalance: its chunks finish but commit nothing', async () => {
    const { ledger, applies, commits, add } = ledgerUnderTest();
    const old = add(0, 99);
    const oldBehind = add(0, 199);
    await tick();
    ledger.newGeneration();
    assert.equal(await oldBehind, false, 'a chunk of the old generation that had not started is given up');
    const fresh = add(0, 99);
    await tick();
    assert.equal(applies.length, 2, 'the new generation does not wait for the old one');
    applies[0]!.finish(true);
    assert.equal(await old, false);
    await ledger.flush();
    assert.equal(commits.length, 0, 'an old generation\'s chunk commits nothing');
    applies[1]!.finish(true);
    await fresh;
    await ledger.flush();
    assert.deepEqual(commits.flat().map((c) => c.offset), ['100']);
  });

  it('holds the fetch while `limit` events wait for their commit, and lets it go when one is applied', async () => {
    const { ledger, applies, add } = ledgerUnderTest();
    const a = add(0, 99, 60);
    add(1, 99, 60);
    let roomMade = false;
    const room = ledger.waitForRoom(100).then(() => (roomMade = true));
    await tick();
    assert.equal(roomMade, false, '120 events held against a limit of 100');
    applies[0]!.finish(true);
    await a;
    await room;
    assert.equal(ledger.held, 60);
  });

  it('drains for a stop: what is applying finishes and is committed; what waits behind it is given up', async () => {
    const { ledger, applies, commits, add } = ledgerUnderTest();
    add(0, 99);
    const b = add(0, 199);
    await tick();
    const drained = ledger.drain(5_000);
    applies[0]!.finish(true);
    await drained;
    assert.equal(ledger.taking, false);
    assert.equal(await b, false);
    assert.equal(applies.length, 1);
    assert.deepEqual(commits.flat().map((c) => c.offset), ['100']);
  });

  it('retries a failed commit by itself, without moving past what was applied', async () => {
    let fail = true;
    const failed: string[] = [];
    const committed: string[] = [];
    const { ledger, applies, add } = ledgerUnderTest({
      commit: async (offsets) => {
        const text = offsets.map((o) => o.offset).join();
        if (fail) {
          failed.push(text);
          throw new Error('rebalance in progress');
        }
        committed.push(text);
      },
    });
    const a = add(0, 99);
    await tick();
    applies[0]!.finish(true);
    await a;
    await tick();
    assert.deepEqual([failed, committed], [['100'], []]);
    fail = false;
    // No new chunk arrives: the retry timer alone commits it.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    await ledger.flush();
    assert.deepEqual(committed, ['100']);
  });
});

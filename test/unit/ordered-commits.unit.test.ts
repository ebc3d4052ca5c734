import assert from 'node:assert/strict';
import { OrderedCommits, type PartitionOffset } from '../../inbox/ordered-commits';

// The ledger that lets the consumer fetch ahead of its commits (inbox/ordered-commits.ts): the
// chunks' applies are driven by hand here (each is a promise the test settles), and the commits
// are recorded, so the order of applies and of committed offsets is what is asserted.

interface Gate {
  started: boolean;
  finish(applied: boolean): void;
}

function gatedChunk(commits: OrderedCommits, partition: number, lastOffset: number, events = 10): { gate: Gate; settled: Promise<boolean> } {
  let finish: (applied: boolean) => void = () => undefined;
  const gate: Gate = { started: false, finish: (applied) => finish(applied) };
  const settled = commits.add({
    topic: 't',
    partition,
    lastOffset: String(lastOffset),
    events,
    apply: () =>
      new Promise<boolean>((resolve) => {
        gate.started = true;
        finish = resolve;
      }),
  });
  return { gate, settled };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

function recorder() {
  const commits: PartitionOffset[][] = [];
  const ledger = new OrderedCommits(
    async (offsets) => {
      commits.push(offsets);
    },
    () => undefined,
  );
  return { ledger, commits };
}

describe('ordered commits (the consumer fetching ahead)', () => {
  it('applies a partition\'s chunks one after another, in offset order, while other partitions go on', async () => {
    const { ledger } = recorder();
    const a = gatedChunk(ledger, 0, 99);
    const b = gatedChunk(ledger, 0, 199);
    const c = gatedChunk(ledger, 1, 49);
    await tick();
    assert.deepEqual([a.gate.started, b.gate.started, c.gate.started], [true, false, true], 'the second chunk of partition 0 waits for the first; partition 1 does not');
    a.gate.finish(true);
    await a.settled;
    await tick();
    assert.equal(b.gate.started, true);
  });

  it('commits a partition only past applied chunks, the next offset to read, never moving back', async () => {
    const { ledger, commits } = recorder();
    const a = gatedChunk(ledger, 0, 99);
    const b = gatedChunk(ledger, 0, 199);
    await tick();
    assert.equal(commits.length, 0, 'nothing is committed before an apply finished');
    a.gate.finish(true);
    await a.settled;
    await ledger.flush();
    assert.deepEqual(commits.flat(), [{ topic: 't', partition: 0, offset: '100' }]);
    await tick();
    b.gate.finish(true);
    await b.settled;
    await ledger.flush();
    assert.deepEqual(commits.flat().map((c) => c.offset), ['100', '200']);
  });

  it('gives up the chunks behind one that was given up, and commits none of them', async () => {
    const { ledger, commits } = recorder();
    const a = gatedChunk(ledger, 0, 99);
    const b = gatedChunk(ledger, 0, 199);
    await tick();
    a.gate.finish(false);
    assert.equal(await a.settled, false);
    assert.equal(await b.settled, false);
    assert.equal(b.gate.started, false, 'a chunk after a gap is never applied');
    await ledger.flush();
    assert.deepEqual(commits, []);
  });

  it('forgets the old generation at a rebalance: its chunks finish but commit nothing', async () => {
    const { ledger, commits } = recorder();
    const old = gatedChunk(ledger, 0, 99);
    await tick();
    ledger.newGeneration();
    const fresh = gatedChunk(ledger, 0, 99);
    await tick();
    assert.equal(fresh.gate.started, true, 'the new generation does not wait for the old one');
    old.gate.finish(true);
    assert.equal(await old.settled, false);
    await ledger.flush();
    assert.equal(commits.length, 0, 'an old generation\'s chunk commits nothing');
    fresh.gate.finish(true);
    await fresh.settled;
    await ledger.flush();
    assert.deepEqual(commits.flat().map((c) => c.offset), ['100']);
  });

  it('holds the fetch while `limit` events wait for their commit, and lets it go when one is applied', async () => {
    const { ledger } = recorder();
    const a = gatedChunk(ledger, 0, 99, 60);
    gatedChunk(ledger, 1, 99, 60);
    let roomMade = false;
    const room = ledger.waitForRoom(100).then(() => (roomMade = true));
    await tick();
    assert.equal(roomMade, false, '120 events held against a limit of 100');
    a.gate.finish(true);
    await room;
    assert.equal(ledger.held, 60);
  });

  it('drains for a stop: what is applying finishes and is committed; what waits behind it is given up', async () => {
    const { ledger, commits } = recorder();
    const a = gatedChunk(ledger, 0, 99);
    const b = gatedChunk(ledger, 0, 199);
    await tick();
    const drained = ledger.drain(5_000);
    a.gate.finish(true);
    await drained;
    assert.equal(ledger.taking, false);
    assert.equal(b.gate.started, false);
    assert.deepEqual(commits.flat().map((c) => c.offset), ['100']);
  });

  it('retries a failed commit by itself, without moving past what was applied', async () => {
    let fail = true;
    const failed: string[] = [];
    const committed: string[] = [];
    const ledger = new OrderedCommits(
      async (offsets) => {
        const text = offsets.map((o) => o.offset).join();
        if (fail) {
          failed.push(text);
          throw new Error('rebalance in progress');
        }
        committed.push(text);
      },
      () => undefined,
    );
    const a = gatedChunk(ledger, 0, 99);
    await tick();
    a.gate.finish(true);
    await a.settled;
    await tick();
    assert.deepEqual([failed, committed], [['100'], []]);
    fail = false;
    // No new chunk arrives: the retry timer alone commits it.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    await ledger.flush();
    assert.deepEqual(committed, ['100']);
  });
});

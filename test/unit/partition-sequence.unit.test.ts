import assert from 'node:assert/strict';
import { PartitionSequence } from '../../src/inbox/partition-sequence';

// While kafkajs fetches ahead, a partition's chunks are still applied one after another in
// offset order, and its offset is committed only past chunks that are applied.

/** A chunk whose application the test settles by hand; `started` says whether it was asked to apply. */
function pendingChunk(offset: string) {
  let settle!: (outcome: string | undefined) => void;
  const result = new Promise<string | undefined>((resolve) => (settle = resolve));
  const chunk = {
    started: false,
    apply: () => {
      chunk.started = true;
      return result;
    },
    finish: () => settle(offset),
    abandon: () => settle(undefined),
  };
  return chunk;
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** A commit that records what it committed, in order. */
const recordInto = (committed: string[], prefix = '') => async (outcome: string) => void committed.push(prefix + outcome);

describe('partition sequence', () => {
  it("a partition's next chunk starts only once the one before it is applied, and commits after it", async () => {
    const sequence = new PartitionSequence();
    const committed: string[] = [];
    const first = pendingChunk('99');
    const second = pendingChunk('199');
    sequence.add('t|0', 1, first.apply, recordInto(committed));
    const tail = sequence.add('t|0', 1, second.apply, recordInto(committed));
    await turn();
    assert.equal(first.started, true);
    assert.equal(second.started, false, 'two chunks of one partition must not be applied at once');
    first.finish();
    await turn();
    assert.equal(second.started, true);
    assert.deepEqual(committed, ['99']);
    second.finish();
    assert.equal(await tail, true);
    assert.deepEqual(committed, ['99', '199']);
  });

  it('partitions do not wait for each other', async () => {
    const sequence = new PartitionSequence();
    const committed: string[] = [];
    const slow = pendingChunk('5');
    const fast = pendingChunk('7');
    sequence.add('t|0', 1, slow.apply, recordInto(committed, 'p0:'));
    const fastTail = sequence.add('t|1', 1, fast.apply, recordInto(committed, 'p1:'));
    await turn();
    assert.equal(fast.started, true);
    fast.finish();
    assert.equal(await fastTail, true);
    assert.deepEqual(committed, ['p1:7']);
    slow.finish();
    await sequence.drain();
    assert.deepEqual(committed, ['p1:7', 'p0:5']);
  });

  it('after an abandoned chunk nothing of that generation is applied or committed; a new generation starts afresh', async () => {
    const sequence = new PartitionSequence();
    const committed: string[] = [];
    const lost = pendingChunk('10');
    const after = pendingChunk('20');
    sequence.add('t|0', 1, lost.apply, recordInto(committed));
    const tail = sequence.add('t|0', 1, after.apply, recordInto(committed));
    lost.abandon();
    assert.equal(await tail, false);
    assert.equal(after.started, false, 'a chunk after an abandoned one is not applied');
    assert.equal(committed.length, 0, 'nothing committed');
    assert.equal(await sequence.committed('t|0', 1), false, 'later chunks of generation 1 stay blocked');
    const rejoined = pendingChunk('10');
    const fresh = sequence.add('t|0', 2, rejoined.apply, recordInto(committed));
    await turn();
    assert.equal(rejoined.started, true, 'generation 2 does not wait for generation 1');
    rejoined.finish();
    assert.equal(await fresh, true);
    assert.deepEqual(committed, ['10']);
  });

  it('a commit that fails does not hold back the next chunk (it is applied all the same)', async () => {
    const sequence = new PartitionSequence();
    const committed: string[] = [];
    const first = pendingChunk('1');
    const second = pendingChunk('2');
    sequence.add('t|0', 1, first.apply, async () => {
      // The caller logs a refused commit and returns: the chunk stays applied.
    });
    const tail = sequence.add('t|0', 1, second.apply, recordInto(committed));
    first.finish();
    await turn();
    second.finish();
    assert.equal(await tail, true);
    assert.deepEqual(committed, ['2']);
  });

  it('drain waits for chunks added while it waits', async () => {
    const sequence = new PartitionSequence();
    const first = pendingChunk('1');
    const later = pendingChunk('2');
    sequence.add('t|0', 1, first.apply, async () => undefined);
    let drained = false;
    const draining = sequence.drain().then(() => (drained = true));
    sequence.add('t|1', 1, later.apply, async () => undefined);
    first.finish();
    await turn();
    assert.equal(drained, false, 'a chunk added after drain started is still pending');
    later.finish();
    await draining;
    assert.equal(drained, true);
  });

  it('applied settles once the chunk is applied, while its commit is still on its way', async () => {
    const sequence = new PartitionSequence();
    let commitSent!: () => void;
    const chunk = pendingChunk('49');
    sequence.add('t|0', 1, chunk.apply, () => new Promise<void>((resolve) => (commitSent = resolve)));
    let applied = false;
    let committed = false;
    void sequence.applied('t|0', 1).then(() => (applied = true));
    void sequence.committed('t|0', 1).then(() => (committed = true));
    await turn();
    assert.equal(applied, false, 'not before the chunk is applied');
    chunk.finish();
    await turn();
    assert.equal(applied, true);
    assert.equal(committed, false, 'the commit is still in flight');
    commitSent();
    await turn();
    assert.equal(committed, true);
  });
});

import assert from 'node:assert/strict';
import { OffsetCommitGathering, type OffsetsToCommit } from '../../src/inbox/offset-commit-gathering';

describe('OffsetCommitGathering (one OffsetCommit request per flight)', () => {
  it('sends the commits of one turn of the event loop as one request, and the next turn’s as another', async () => {
    const sent: OffsetsToCommit[] = [];
    const send = async (offsets: OffsetsToCommit) => void sent.push(offsets);
    const gathering = new OffsetCommitGathering();
    const flight = [gathering.commit(send, 'payments', 0, '10'), gathering.commit(send, 'payments', 3, '7'), gathering.commit(send, 'orders', 1, '2')];
    assert.equal(sent.length, 0, 'nothing leaves before the turn ends');
    await Promise.all(flight);
    assert.deepEqual(sent, [
      {
        topics: [
          { topic: 'payments', partitions: [{ partition: 0, offset: '10' }, { partition: 3, offset: '7' }] },
          { topic: 'orders', partitions: [{ partition: 1, offset: '2' }] },
        ],
      },
    ]);
    await gathering.commit(send, 'payments', 0, '11');
    assert.equal(sent.length, 2);
    assert.deepEqual(sent[1], { topics: [{ topic: 'payments', partitions: [{ partition: 0, offset: '11' }] }] });
  });

  it('keeps the later offset of a partition and fails every caller with the request', async () => {
    const sent: OffsetsToCommit[] = [];
    const gathering = new OffsetCommitGathering();
    const failing = async (offsets: OffsetsToCommit) => {
      sent.push(offsets);
      throw new Error('REBALANCE_IN_PROGRESS');
    };
    const a = gathering.commit(failing, 'payments', 2, '100');
    const b = gathering.commit(failing, 'payments', 2, '40');
    await assert.rejects(a, /REBALANCE_IN_PROGRESS/);
    await assert.rejects(b, /REBALANCE_IN_PROGRESS/);
    assert.deepEqual(sent, [{ topics: [{ topic: 'payments', partitions: [{ partition: 2, offset: '100' }] }] }]);
  });
});

import assert from 'node:assert/strict';
import { concernsShard, parsePendingNotification } from '../../activities/relay/pending-notification';

// Which idle shard a notification wakes; the real trigger and listener are tested in
// test/integration/relay-pending-listener.integration.test.ts.
describe('pending notification', () => {
  const shard = (shardIndex: number, shardCount = 8) => ({ shardIndex, shardCount });

  it('wakes only the shards the trigger names, under the waiter\'s own layout', () => {
    const n = parsePendingNotification('8:0,3,5');
    assert.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].filter((i) => concernsShard(n, shard(i))), [0, 3, 5]);
    assert.equal(concernsShard(n, shard(1, 4)), true, 'computed for another shard count: it cannot tell, so it wakes');
    assert.equal(concernsShard(n, undefined), true, 'a waiter for no particular shard wakes on anything');
  });

  it('wakes every shard when the payload does not name shards', () => {
    for (const payload of ['', undefined, 'rescan', '8:', '8:1,,2', 'x:1', '8:1;DROP']) {
      assert.equal(concernsShard(parsePendingNotification(payload), shard(6)), true, `payload ${JSON.stringify(payload)}`);
    }
  });
});

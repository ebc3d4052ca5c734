import assert from 'node:assert/strict';
import { chunkEnds, eventBytes, EVENT_OVERHEAD_BYTES } from '../../src/inbox/chunk-bounds';

// How a partition's fetched messages are cut into chunks: by count, and by bytes so that one
// workflow input stays under Temporal's payload limit whatever the events' size.
describe('chunk bounds', () => {
  it('cuts by count when the messages are small', () => {
    assert.deepEqual(chunkEnds(Array(10).fill(100), 4, 1_000_000), [4, 8, 10]);
  });
  it('cuts by bytes when the messages are large, never past the bound', () => {
    const sizes = [300_000, 300_000, 300_000, 300_000, 50_000];
    const ends = chunkEnds(sizes, 4000, 1_000_000);
    assert.deepEqual(ends, [3, 5]);
    let start = 0;
    for (const end of ends) {
      assert.ok(sizes.slice(start, end).reduce((a, b) => a + b, 0) <= 1_000_000);
      start = end;
    }
  });
  it('a message larger than the bound travels alone instead of stalling the partition', () => {
    assert.deepEqual(chunkEnds([10, 2_000_000, 10], 4000, 1_000_000), [1, 2, 3]);
  });
  it('no messages, no chunks; every message in exactly one chunk', () => {
    assert.deepEqual(chunkEnds([], 10, 100), []);
    const sizes = Array.from({ length: 1000 }, (_, i) => (i * 7919) % 997);
    const ends = chunkEnds(sizes, 37, 5000);
    assert.equal(ends.at(-1), sizes.length);
    ends.reduce((prev, end) => (assert.ok(end > prev && end - prev <= 37), end), 0);
  });
  it('a message stands for its value plus a fixed allowance; an empty one for the allowance', () => {
    assert.equal(eventBytes(Buffer.alloc(500)), 500 + EVENT_OVERHEAD_BYTES);
    assert.equal(eventBytes(null), EVENT_OVERHEAD_BYTES);
  });
});

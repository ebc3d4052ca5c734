import assert from 'node:assert/strict';
import { tailEpisodes } from '../../tools/bench/support/latency-tail';

describe('a latency run tail, by when its slow events were committed', () => {
  const start = 1_000_000;
  // A quiet run at 5 ms with two stalls 2 s apart: the shape a periodic timer in a worker leaves.
  const events = Array.from({ length: 5000 }, (_, i) => {
    const committed = start + i;
    const inStall = (i >= 1000 && i < 1060) || (i >= 3000 && i < 3040);
    return { committed, ms: inStall ? 80 : 5 };
  });

  it('groups the slow events into one episode per stall, with its size and its worst', () => {
    assert.deepEqual(tailEpisodes(events, start, 50), [
      { atMs: 1000, events: 60, maxMs: 80 },
      { atMs: 3000, events: 40, maxMs: 80 },
    ]);
  });

  it('splits slow events further apart than the gap', () => {
    assert.equal(tailEpisodes(events, start, 50, 200).length, 2);
    assert.equal(tailEpisodes(events, start, 50, 3000).length, 1);
  });

  it('has no episode when nothing reaches the threshold', () => {
    assert.deepEqual(tailEpisodes(events, start, 81), []);
  });
});

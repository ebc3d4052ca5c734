import assert from 'node:assert/strict';
import { NO_BOUND, PendingScanBound } from '../../activities/relay/pending-scan-bound';

// The bound's bookkeeping, step by step; the real-PostgreSQL side (locks, snapshots, a late
// committer) is in test/integration/relay-vacuum-horizon.integration.test.ts.

/** One poll: plan, result, and (when asked) the sequence's lock holders at that moment. */
function poll(bound: PendingScanBound, at: number, ids: number[], holders: string[] = [], excludedIds?: number[]) {
  const plan = bound.plan(at);
  const { needHolders, ceiling } = bound.observePoll(plan, { ids, excludedIds });
  if (needHolders) bound.observeHolders(ceiling, holders, at + 0.5);
  return plan;
}

describe('PendingScanBound', () => {
  it('trusts a ceiling only at a poll that starts after every id holder seen with it has ended', () => {
    const bound = new PendingScanBound(60_000);
    assert.equal(poll(bound, 1, [101, 102], ['3/7']).fullScan, true);
    // Ceiling 100; transaction 3/7 holds an id (maybe 50, committed late): not trusted yet.
    poll(bound, 2, [101, 102], ['3/7']);
    assert.equal(bound.snapshot.trusted, NO_BOUND);
    poll(bound, 3, [201], ['3/7']);
    poll(bound, 4, [301], ['3/7', '4/9']);
    assert.equal(bound.snapshot.trusted, NO_BOUND, 'the bound must not pass an id a running transaction may hold');
    poll(bound, 5, [50, 301], ['4/9']); // 3/7 committed id 50: seen, and its holder is gone now
    assert.equal(bound.snapshot.trusted, NO_BOUND, 'ready at this poll, promoted only by a later one');
    assert.equal(poll(bound, 6, [50, 301]).from, NO_BOUND);
    assert.equal(bound.snapshot.trusted, 49, 'promoted to min(candidate, lowest pending - 1)');
    assert.equal(poll(bound, 7, [301]).from, 49);
  });

  it('when nothing is pending, trusts only ids some earlier poll has seen', () => {
    const bound = new PendingScanBound(60_000);
    poll(bound, 1, []);
    poll(bound, 2, []);
    assert.equal(bound.snapshot.trusted, NO_BOUND);
    poll(bound, 3, [7, 8, 9]);
    poll(bound, 4, []);
    poll(bound, 5, []);
    assert.equal(bound.snapshot.trusted, 9);
  });

  it('never passes ids that are still being marked published', () => {
    const bound = new PendingScanBound(60_000);
    poll(bound, 1, [10, 11]);
    poll(bound, 2, [12, 13], [], [10, 11]);
    poll(bound, 3, [14], [], [12, 13]);
    assert.equal(bound.snapshot.trusted, 9);
    poll(bound, 4, [], [], [14]);
    assert.equal(bound.snapshot.trusted, 11);
  });

  it('reads from the beginning every interval, and a pending row found below the bound pulls it down', () => {
    const bound = new PendingScanBound(1_000);
    poll(bound, 1, [500]);
    poll(bound, 2, [500]);
    poll(bound, 3, [600]);
    assert.equal(bound.snapshot.trusted, 499);
    assert.equal(poll(bound, 4, [600]).fullScan, false);
    const full = poll(bound, 1_010, [42, 600]); // an operator set published_at = NULL on row 42
    assert.equal(full.fullScan, true);
    assert.equal(bound.snapshot.trusted, 41);
    assert.equal(poll(bound, 1_011, [600]).from, 41);
    bound.requestFullScan();
    assert.equal(poll(bound, 1_012, [600]).fullScan, true);
  });

  it('reads the holders at most once per holdersEveryMs, and the bound still moves on', () => {
    const reads: number[] = [];
    const polled = (bound: PendingScanBound, at: number, ids: number[]) => {
      const { needHolders, ceiling } = bound.observePoll(bound.plan(at), { ids });
      if (needHolders) {
        reads.push(at);
        bound.observeHolders(ceiling, [], at + 0.5);
      }
    };
    const unthrottled = new PendingScanBound(60_000);
    for (let at = 0; at < 100; at += 10) polled(unthrottled, at, [at + 1]);
    assert.equal(reads.length, 10, 'without a spacing every poll of a trickle reads the holders');
    reads.length = 0;

    const bound = new PendingScanBound(60_000, 100);
    for (let at = 0; at < 1000; at += 10) polled(bound, at, [at + 1]);
    // The spacing runs from when a read's result arrived (here half a millisecond after its poll).
    assert.deepEqual(reads, [0, 110, 220, 330, 440, 550, 660, 770, 880, 990]);
    assert.ok(bound.snapshot.trusted >= 880, `the bound follows about a tenth of a second behind (trusted ${bound.snapshot.trusted})`);
  });
});

import assert from 'node:assert/strict';
import { stillAvoided } from '../../src/outbox/relay-avoidance';
import { LinkStreak } from '../../workers/link-streak';

// A shard leaves out a worker its session timed out on; it takes it back as soon as that worker
// reports its links healthy since after the session was placed, and not before
// (src/outbox/relay-avoidance.ts, docs/guarantees.md#stepping-aside).
describe('relay placement: a worker a shard stopped trusting', () => {
  const placedAt = 1_000_000;
  const worker = (linksOkSince?: number) => [{ workerId: 'a', taskQueue: 'q@a', ...(linksOkSince === undefined ? {} : { linksOkSince }) }, { workerId: 'b', taskQueue: 'q@b' }];

  it('stays left out while its links fail (no links_ok_since)', () => {
    assert.deepEqual([...stillAvoided({ avoid: ['a'], avoidSince: { a: placedAt } }, worker())], ['a']);
  });

  it('stays left out when it has reported healthy since before the session was placed (it never noticed its fault: hung or frozen)', () => {
    assert.deepEqual([...stillAvoided({ avoid: ['a'], avoidSince: { a: placedAt } }, worker(placedAt - 1))], ['a']);
  });

  it('is taken back once its links have answered since after the session was placed (a fault shorter than its step-aside, healed)', () => {
    assert.deepEqual([...stillAvoided({ avoid: ['a'], avoidSince: { a: placedAt } }, worker(placedAt + 15_000))], []);
  });

  it('stays left out when the workflow does not know when its session was placed (histories from before)', () => {
    assert.deepEqual([...stillAvoided({ avoid: ['a'] }, worker(placedAt + 15_000))], ['a']);
  });
});

describe('a worker link streak', () => {
  it('is null from a failed round until a clean one, then counts from that round', async () => {
    const streak = new LinkStreak();
    assert.ok(streak.okForMs()! >= 0, 'a worker starts healthy');
    streak.round(['temporal']);
    assert.equal(streak.okForMs(), null);
    streak.round([]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(streak.okForMs()! >= 15 && streak.okForMs()! < 1_000);
  });

  it('starts again after a link broke outside the health check (a Kafka connection presumed dead), from the next clean round', async () => {
    const streak = new LinkStreak();
    await new Promise((resolve) => setTimeout(resolve, 20));
    streak.broke();
    assert.equal(streak.okForMs(), null, 'no streak until a round answers in full');
    streak.round([]);
    assert.ok(streak.okForMs()! < 15, 'counted from that round, not from the start');
  });
});

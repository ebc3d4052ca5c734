import assert from 'node:assert/strict';
import { judgeRedeliveryHorizon } from '../../src/kafka/topic-retention';

const DAY = 86_400_000;
const limits = { inboxRetentionMs: 14 * DAY, maxConsumerLagMs: DAY };

describe('redelivery horizon (unit)', () => {
  it('accepts a topic whose retention plus the allowed lag ends before the inbox forgets', () => {
    assert.deepEqual(judgeRedeliveryHorizon({ topic: 't', retentionMs: 7 * DAY, cleanupPolicy: 'delete' }, limits), { safe: true, marginMs: 6 * DAY });
  });

  it('refuses retention + lag equal to or beyond the inbox horizon', () => {
    const atEdge = judgeRedeliveryHorizon({ topic: 't', retentionMs: 13 * DAY, cleanupPolicy: 'delete' }, limits);
    assert.equal(atEdge.safe, false);
    const verdict = judgeRedeliveryHorizon({ topic: 't', retentionMs: 30 * DAY, cleanupPolicy: 'delete' }, limits);
    assert.ok(!verdict.safe);
    assert.match(verdict.problem, /keeps messages for 2592000000 ms .* credited twice/);
    assert.match(verdict.fix, /below INBOX_RETENTION_MS - CONSUMER_MAX_LAG_MS \(1123200000 ms\)/);
  });

  it('refuses infinite retention and compacted topics', () => {
    const forever = judgeRedeliveryHorizon({ topic: 't', retentionMs: null, cleanupPolicy: 'delete' }, limits);
    assert.ok(!forever.safe && /retention\.ms=-1/.test(forever.problem));
    const compacted = judgeRedeliveryHorizon({ topic: 't', retentionMs: null, cleanupPolicy: 'compact,delete' }, limits);
    assert.ok(!compacted.safe && /cleanup\.policy=compact,delete/.test(compacted.problem));
  });
});

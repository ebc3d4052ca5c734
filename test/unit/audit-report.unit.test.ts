import assert from 'node:assert/strict';
import { driftLines } from '../../src/audit/last-run';
import { driftCounts, findingKeys, hasDrift, reportMarkdown } from '../../src/audit/report';
import type { AuditReport, ConsumerAudit, TopicAudit } from '../../src/audit/types';

// The report's figures and lines for the kinds a lost database transaction leaves (applied with
// no outbox row, only on the topic), and a report from before those kinds, as `audit last` and
// the doctor still read it from the last finished run.
describe('audit report: the failover kinds', () => {
  const consumer: ConsumerAudit = {
    consumer: 'payments-credit',
    eventTypes: ['payment_confirmed'],
    expected: 3,
    applied: 2,
    parked: { count: 0, listed: [] },
    notApplied: { count: 1, listed: [{ consumer: 'payments-credit', eventId: 'evt-unapplied', outboxId: 7, publishedAt: '2026-12-06T07:00:00.000Z' }] },
    appliedWithoutOutboxRow: { count: 1, listed: [{ consumer: 'payments-credit', eventId: 'evt-orphan', processedAt: '2026-12-06T07:01:00.000Z' }] },
  };
  const topic: TopicAudit = {
    topic: 'payments.events',
    inWindow: 40,
    read: 40,
    onTopicOnly: { count: 2, listed: [{ topic: 'payments.events', eventId: 'evt-topic-only', partition: 1, offset: '12', publishedAt: '2026-12-06T07:02:00.000Z' }] },
  };
  const report = (): AuditReport => {
    const counts = driftCounts([consumer], [], [topic]);
    return {
      window: { from: '2026-12-06T06:00:00.000Z', to: '2026-12-06T07:00:00.000Z' },
      settings: { windowMs: 3_600_000, settleMs: 0, consumers: [{ consumer: 'payments-credit', eventTypes: ['payment_confirmed'] }], maxListed: 100, readTopics: true, maxTopicMessages: 1_000_000 },
      outbox: { events: 3, published: 3, pending: 0, parked: { count: 0, listed: [] } },
      consumers: [consumer],
      topics: [topic],
      checks: [],
      drift: hasDrift(counts),
      driftCounts: counts,
      durationMs: 1,
    };
  };

  it('counts each kind, and either new kind alone is drift', () => {
    assert.deepEqual(report().driftCounts, { notApplied: 1, appliedWithoutOutboxRow: 1, onTopicOnly: 2 });
    assert.equal(hasDrift(driftCounts([{ ...consumer, notApplied: { count: 0, listed: [] } }], [], [])), true);
    assert.equal(hasDrift(driftCounts([{ ...consumer, notApplied: { count: 0, listed: [] }, appliedWithoutOutboxRow: { count: 0, listed: [] } }], [], [topic])), true);
  });

  it('names each event in the search attribute keys, the UI details and the lines of audit last', () => {
    const r = report();
    assert.deepEqual(findingKeys(r).sort(), ['event:evt-orphan', 'event:evt-topic-only', 'event:evt-unapplied']);
    const details = reportMarkdown(r);
    for (const text of ['evt-orphan', 'evt-topic-only', '40 of 40 messages']) assert.ok(details.includes(text), `${text} in:\n${details}`);
    const lines = driftLines(r);
    assert.ok(lines.some((l) => l.includes('evt-orphan') && l.includes('no outbox row')), lines.join('\n'));
    assert.ok(lines.some((l) => l.includes('evt-topic-only') && l.includes('only on topic payments.events')), lines.join('\n'));
  });

  it('reads a report from before these kinds (no topics, no appliedWithoutOutboxRow) without failing', () => {
    const older: Partial<ConsumerAudit> = { ...consumer };
    delete older.appliedWithoutOutboxRow;
    const old = { ...report(), consumers: [older], topics: undefined } as unknown as AuditReport;
    assert.deepEqual(driftLines(old), ['event evt-unapplied (outbox id 7) published but never applied by payments-credit']);
  });
});

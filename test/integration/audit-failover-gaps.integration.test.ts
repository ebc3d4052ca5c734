import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import type { Producer } from 'kafkajs';
import { ensureAuditSchedule } from '../../src/audit/schedule';
import { triggerAuditRun } from '../../src/audit/trigger-run';
import { loadConfig, type Config } from '../../src/config/env';
import { HEADERS } from '../../src/kafka/message-format';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { startAuditWorker } from '../kit/audit-worker';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { testTemporalClient } from '../kit/temporal';

// What a PostgreSQL failover with asynchronous replication leaves, found by the scheduled audit
// itself, not only by `audit repair` (docs/guarantees.md, "PostgreSQL failover"). The states are
// made directly, as the lost transactions leave them (the failover rig, test/kit/failover-rig.ts,
// produces them with a real promotion): an event applied whose outbox row is gone (its producer's
// transaction was lost, its message was not), an event only the topic has, and beside them an
// event published and never applied and one applied as it should be.
describe('the scheduled audit finds every gap a lost database transaction leaves', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  let auditWorker: { close(): Promise<void> };
  let producer: Producer;
  let config: Config;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    temporal = await testTemporalClient();
    await ensureSearchAttributes(temporal.connection, temporal.client.options.namespace);
    config = loadConfig({
      ...process.env,
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic.topic,
      AUDIT_SCHEDULE_ID: uniqueName('audit-gaps-schedule'),
      AUDIT_TASK_QUEUE: uniqueName('audit-gaps-tq'),
      AUDIT_SETTLE_MS: '0',
      AUDIT_INTERVAL: '1h',
    });
    auditWorker = await startAuditWorker(config);
    producer = testKafka().producer();
    await producer.connect();
    await ensureAuditSchedule(temporal.client, config);
  });

  after(async () => {
    await temporal?.client.schedule.getHandle(config.audit.scheduleId).delete().catch(() => undefined);
    await producer?.disconnect();
    await auditWorker?.close();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const inbox = () => config.audit.consumers[0]!.consumer;
  const payload = (eventId: string) => JSON.stringify({ event_id: eventId, type: 'payment_confirmed', account_id: 1, amount: 10 });
  /** What the relay does for a row: its message on the topic, the row marked published. */
  async function published(eventId: string) {
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload, published_at) VALUES ('payment_confirmed', $1::jsonb, now())`, [payload(eventId)]);
    await onTopic(eventId);
  }
  async function onTopic(eventId: string) {
    await producer.send({ topic: topic.topic, messages: [{ key: 'acct-1', value: payload(eventId), headers: { [HEADERS.eventId]: eventId, [HEADERS.eventType]: 'payment_confirmed' } }] });
  }
  async function applied(eventId: string) {
    await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ($1, $2)`, [inbox(), eventId]);
  }

  it('reports, by event id, events applied with no outbox row and events only on the topic, beside those never applied', async () => {
    const id = uniqueName('gap');
    // Applied as it should be: no finding.
    await published(`${id}-fine`);
    await applied(`${id}-fine`);
    // The producer's transaction was lost after the relay published it and a consumer applied it.
    await published(`${id}-applied-orphan`);
    await applied(`${id}-applied-orphan`);
    await db.pool.query(`DELETE FROM temporal_outbox.outbox_events WHERE payload ->> 'event_id' = $1`, [`${id}-applied-orphan`]);
    // The producer's transaction was lost after the relay published it; no consumer applied it here.
    await onTopic(`${id}-topic-only`);
    // Marked published, its inbox row lost (or never sent): the kind the audit always reported.
    await published(`${id}-unapplied`);

    const { report } = await triggerAuditRun(temporal.client, config.audit.scheduleId);

    const [consumer] = report.consumers;
    assert.deepEqual(consumer!.notApplied.listed.map((x) => x.eventId), [`${id}-unapplied`]);
    assert.deepEqual(consumer!.appliedWithoutOutboxRow?.listed.map((x) => x.eventId), [`${id}-applied-orphan`], 'an applied event whose outbox row is gone is reported');
    assert.deepEqual(
      report.topics?.map((t) => ({ topic: t.topic, onTopicOnly: t.onTopicOnly.listed.map((x) => x.eventId), read: t.read, inWindow: t.inWindow })),
      [{ topic: topic.topic, onTopicOnly: [`${id}-topic-only`], read: 4, inWindow: 4 }],
      'the event only the topic has is reported; the topic was read whole',
    );
    assert.equal(report.drift, true);
    assert.equal(report.driftCounts.notApplied, 1);
    assert.equal(report.driftCounts.appliedWithoutOutboxRow, 1);
    assert.equal(report.driftCounts.onTopicOnly, 1);
  });

  it('reads at most AUDIT_MAX_TOPIC_MESSAGES of a busy topic per run, from the window\'s start, and says how much it read', async () => {
    for (let i = 0; i < 30; i++) await onTopic(uniqueName('burst'));
    const bounded = loadConfig({ ...process.env, DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, AUDIT_SCHEDULE_ID: uniqueName('audit-gaps-bounded'), AUDIT_TASK_QUEUE: config.audit.taskQueue, AUDIT_SETTLE_MS: '0', AUDIT_INTERVAL: '1h', AUDIT_MAX_TOPIC_MESSAGES: '9' });
    await ensureAuditSchedule(temporal.client, bounded);
    try {
      const { report } = await triggerAuditRun(temporal.client, bounded.audit.scheduleId);
      // Every message has one key, so one partition holds the 34 and the bound applies to it whole.
      assert.deepEqual(report.topics?.map((t) => [t.inWindow, t.read]), [[34, 9]]);
      // The first nine by offset: the first test's four messages (one of them only on the topic), then five of the burst.
      assert.equal(report.driftCounts.onTopicOnly, 6);
    } finally {
      await temporal.client.schedule.getHandle(bounded.audit.scheduleId).delete().catch(() => undefined);
    }
  });
});

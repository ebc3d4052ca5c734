import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { workerTargets } from '../../tools/local-stack/prometheus';
import { enqueue } from '../../src/outbox/enqueue';
import { consumerEnv, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { startTestPrometheus, type TestPrometheus } from '../kit/prometheus';
import { startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { RETENTION_WORKFLOW, type RetentionWorkflow } from '../../workflows/retention/contract';

// Point 1 of issue 14 on the real services: the three worker processes serve /metrics, a real
// Prometheus (the machine's binary) scrapes them and the Temporal SDK's endpoints, and its
// HTTP API shows series that reflect the traffic this test sends — none of it before.

const EVENTS = 40;

describe('metrics: a real Prometheus scrapes the relay, consumer and retention workers', function () {
  this.timeout(600_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  let relay: ConsumerProcess;
  let consumer: ConsumerProcess;
  let retention: ConsumerProcess;
  let prometheus: TestPrometheus;
  // Ports of their own (below the ephemeral range, away from the stack's 19400): 22000-31990.
  const base = 22_000 + Math.floor(Math.random() * 500) * 20;
  const group = uniqueName('metrics-group');
  const retentionQueue = uniqueName('metrics-retention');
  const relayQueue = uniqueName('metrics-relay');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(2);
    temporal = await testTemporalClient();
    const env = {
      METRICS_PORT_BASE: String(base),
      METRICS_SAMPLE_MS: '1000',
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic.topic,
      KAFKA_PARTITIONS: '2',
      CONSUMER_GROUP: group,
      RELAY_TASK_QUEUE: relayQueue,
      RETENTION_TASK_QUEUE: retentionQueue,
    };
    // Every worker through the same process wrapper: JSON log lines parsed from stdout.
    relay = spawnConsumer(env, 'workers/relay.worker.ts');
    consumer = spawnConsumer({ ...env, ...consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('metrics-credit'), partitions: 2 }) });
    retention = spawnConsumer(env, 'workers/retention.worker.ts');
    const config = loadStackConfig({ ...process.env, ...env });
    prometheus = await startTestPrometheus(base + 19, workerTargets(config));
    await Promise.all([relay.waitForLog((l) => l.msg === 'relay worker running', 240_000), consumer.waitForLog((l) => l.msg === 'consumer worker running', 240_000), retention.waitForLog((l) => l.msg === 'retention worker running', 240_000)]);
  });

  after(async () => {
    await terminateStartedShards();
    await prometheus?.stop();
    await relay?.stop('SIGKILL');
    await consumer?.stop('SIGKILL');
    await retention?.stop('SIGKILL');
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const value = async (promql: string) => (await prometheus.query(promql))[0]?.value;

  it('shows published, applied, parked, duplicates, lag and retention series that follow real traffic', async () => {
    await eventually('all six endpoints scraped', async () => (await prometheus.query('up == 1')).length === 6, 60_000, 500);
    // The alert rules loaded (a rule file Prometheus cannot parse would have stopped it).
    assert.ok((await prometheus.rules()).includes('ConsumerGroupEmptyWithBacklog'));
    // Before the traffic: nothing published, applied or deleted (absent series or zero).
    assert.ok(!(((await value('sum(outbox_published_events_total)')) ?? 0) >= EVENTS));
    assert.equal((await value('sum(inbox_events_applied_total)')) ?? 0, 0);
    assert.equal((await value('sum(retention_rows_deleted_total)')) ?? 0, 0);

    const accounts = [101, 102, 103, 104];
    await db.pool.query('INSERT INTO accounts (account_id) SELECT unnest($1::bigint[])', [accounts]);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      for (let i = 0; i < EVENTS; i++) {
        const accountId = accounts[i % accounts.length]!;
        await enqueue(client, { eventType: 'payment_confirmed', payload: { event_id: `m-${i}`, type: 'payment_confirmed', account_id: accountId, amount: 10 + i } });
      }
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    // One row the relay must park (no event id) and one the consumer must park (unknown account).
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"type":"payment_confirmed","account_id":101,"amount":1}')`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"event_id":"m-ghost","type":"payment_confirmed","account_id":999,"amount":1}')`);
    // The pending backlog is visible before any relay runs.
    await eventually('pending gauge shows the backlog', async () => ((await value('outbox_pending_events')) ?? 0) >= EVENTS + 1, 30_000, 500);
    assert.ok(((await value('outbox_oldest_pending_age_seconds')) ?? -1) >= 0);

    const shard = await startShard(temporal.client, relayQueue, { shardIndex: 0, shardCount: 1, batchSize: 500 });
    const credited = async () => Number((await db.pool.query('SELECT coalesce(sum(balance), 0) AS s FROM accounts')).rows[0].s);
    const expected = Array.from({ length: EVENTS }, (_, i) => 10 + i).reduce((a, b) => a + b, 0);
    await eventually('every event credited', async () => (await credited()) === expected, 120_000);

    // An operator re-publishes one row: the relay counts it again, the inbox absorbs it.
    await db.pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = NULL WHERE payload->>'event_id' = 'm-0'`);

    await eventually('Prometheus shows the traffic', async () => {
      const published = (await value('sum(outbox_published_events_total{event_type="payment_confirmed"})')) ?? 0;
      const applied = (await value('sum(inbox_events_applied_total{handler="payments-credit",event_type="payment_confirmed"})')) ?? 0;
      const duplicates = (await value('sum(inbox_duplicates_absorbed_total)')) ?? 0;
      return published >= EVENTS + 2 && applied === EVENTS && duplicates >= 1;
    }, 60_000, 1000);
    assert.equal(await credited(), expected, 'the re-published row was not credited twice');

    assert.ok(((await value('sum(outbox_publish_latency_seconds_count)')) ?? 0) >= EVENTS + 2, 'one latency observation per published event');
    assert.ok(((await value('histogram_quantile(0.99, sum by (le) (outbox_publish_latency_seconds_bucket))')) ?? -1) > 0);
    assert.equal(await value('sum(outbox_parked_total{reason="malformed"})'), 1);
    // The unknown account is a handler refusal (no separate stage per handler reason).
    assert.equal(await value('sum(inbox_parked_total{stage="rejected"})'), 1);
    assert.ok(((await value('sum(inbox_handler_duration_seconds_count{handler="payments-credit"})')) ?? 0) >= 1);
    await eventually('backlog gauges back to 0 and the parked row counted', async () =>
      (await value('outbox_pending_events')) === 0 && (await value('outbox_oldest_pending_age_seconds')) === 0 && (await value('outbox_parked_events')) === 1 && (await value('inbox_parked_events')) === 1,
    30_000, 500);

    // Lag per partition, from the consumer's fetches and from Kafka's view of the group.
    // (The re-published row's batch may still be committing: it reads 1 until then.)
    await eventually('consumer lag 0 on the partitions it fetched', async () => {
      const consumerLag = await prometheus.query(`inbox_consumer_lag_messages{topic="${topic.topic}"}`);
      return consumerLag.length >= 1 && consumerLag.every((s) => s.value === 0);
    }, 30_000, 500);
    await eventually('group lag 0 on both partitions, one member', async () => {
      const lag = await prometheus.query(`consumer_group_lag_messages{group="${group}"}`);
      return lag.length === 2 && lag.every((s) => s.value === 0) && (await value(`consumer_group_members{group="${group}"}`)) === 1;
    }, 30_000, 500);

    // A retention run with a 1 ms window removes every published row.
    await new Promise((r) => setTimeout(r, 50));
    const report = await temporal.client.workflow.execute<RetentionWorkflow>(RETENTION_WORKFLOW, { taskQueue: retentionQueue, workflowId: uniqueName('metrics-retention-run'), args: [{ windowMs: 1 }] });
    assert.ok(report);
    const remaining = Number((await db.pool.query('SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL')).rows[0].n);
    assert.equal(remaining, 0);
    await eventually('retention series', async () =>
      ((await value('sum(retention_rows_deleted_total{table="outbox_events"})')) ?? 0) >= EVENTS + 1 &&
      ((await value('sum(retention_run_duration_seconds_count{step="sweep_outbox"})')) ?? 0) >= 1,
    30_000, 500);

    // The Temporal SDK's own metrics, from each worker's second endpoint.
    const sdkJobs = await prometheus.query('count by (job) ({__name__=~"temporal_.+", job=~".+-temporal-sdk"})');
    assert.deepEqual(sdkJobs.map((s) => s.metric.job).sort(), ['consumer-temporal-sdk', 'relay-temporal-sdk', 'retention-temporal-sdk']);

    // Logs (point 7): JSON lines carrying workflow, outbox and event ids; never a payload body.
    const parkedLine = await relay.waitForLog((l) => l.msg === 'parked malformed outbox rows', 10_000);
    assert.equal(parkedLine.workflowId, shard.workflowId);
    assert.equal(parkedLine.activityType, 'relayShardSession', 'logged inside the relay session that parked it');
    assert.ok(Array.isArray(parkedLine.outboxIds) && parkedLine.outboxIds.length === 1);
    const creditedLine = await consumer.waitForLog((l) => l.msg === 'batch applied', 10_000);
    assert.ok(typeof creditedLine.workflowId === 'string' && creditedLine.workflowId.length > 0);
    for (const [name, worker] of [['relay', relay], ['consumer', consumer], ['retention', retention]] as const) {
      assert.ok(worker.logs.length > 3, `${name} wrote JSON log lines`);
      const leaked = worker.logs.filter((l) => /"amount"|account_id\W+\d/.test(JSON.stringify(l)));
      assert.deepEqual(leaked, [], `${name} logged a payload body`);
    }
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { Client, Connection } from '@temporalio/client';
import { OUTBOX_REGISTRY } from '../../src/observability/registry';
import { auditScheduleOptions, ensureAuditSchedule } from '../../src/audit/schedule';
import { triggerAuditRun } from '../../src/audit/trigger-run';
import { AUDIT_WORKFLOW, type AuditReport } from '../../workflows/audit/contract';
import { loadConfig, PROJECT_ROOT, type Config } from '../../src/config/env';
import { auditScheduleCheck } from '../../src/doctor/checks/audit-schedule';
import { auditDrift } from '../../src/observability/audit-metrics';
import { runChecks } from '../../src/doctor/run-doctor';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { startAuditWorker } from '../kit/audit-worker';
import { consumerEnv, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);

// The audit on the real pipeline: a relay process and a consumer process apply
// plain-SQL events; a Temporal Schedule of this test's own runs the audit. A clean run reports
// nothing; then three kinds of drift are injected by hand and each is reported with its exact
// event id or account — in the run's result, its search attributes and details, and the doctor.
describe('audit (Temporal Schedule) on the real pipeline', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: RelayProcess;
  let consumer: ConsumerProcess;
  let auditWorker: { close(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  let config: Config;
  let env: Record<string, string>;
  let clean: AuditReport;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    temporal = await testTemporalClient();
    await ensureSearchAttributes(temporal.connection, temporal.client.options.namespace);
    const relayQueue = uniqueName('audit-relay');
    env = {
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic.topic,
      AUDIT_SCHEDULE_ID: uniqueName('audit-schedule'),
      AUDIT_TASK_QUEUE: uniqueName('audit-tq'),
      // Events are settled once the test saw them applied; the window is the default hour.
      AUDIT_SETTLE_MS: '0',
      AUDIT_INTERVAL: '1h',
      // The example consumer's inbox (examples/example-settings.ts) and its handler's type.
      AUDIT_CONSUMERS: 'payments-credit=payment_confirmed',
    };
    config = loadConfig({ ...process.env, ...env });
    relay = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: relayQueue });
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('audit-group'), taskQueue: uniqueName('audit-credit') }));
    // The audit's activities run in this process, as in a retention worker: its gauge starts
    // as a fresh worker's does (other test files in this mocha process may have run audits).
    auditDrift.reset();
    auditWorker = await startAuditWorker(config);
    await Promise.all([relay.waitUntilRunning(), waitUntilRunning(consumer)]);
    await startShard(temporal.client, relayQueue, { shardIndex: 0, shardCount: 1, batchSize: 500 });
    assert.equal(await ensureAuditSchedule(temporal.client, config), 'created');
  });

  after(async () => {
    await temporal?.client.schedule.getHandle(config.audit.scheduleId).delete().catch(() => undefined);
    await terminateStartedShards();
    await relay?.kill9();
    await consumer?.stop('SIGKILL');
    await auditWorker?.close();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  /** outbox_audit_drift as the worker's /metrics renders it: kind → value (consumer "" or payments-credit). */
  const driftGauge = async () => {
    const text = await OUTBOX_REGISTRY.getSingleMetricAsString('outbox_audit_drift');
    const values: Record<string, number> = {};
    for (const [line, labels, value] of text.matchAll(/^outbox_audit_drift\{(.*)\} (\d+)$/gm)) {
      const consumer = /consumer="([^"]*)"/.exec(labels!)![1];
      assert.ok(consumer === '' || consumer === config.consumer.inboxName, line);
      values[/kind="(\w+)"/.exec(labels!)![1]!] = Number(value);
    }
    return values;
  };
  const total = async () => Number((await db.pool.query(`SELECT coalesce(sum(balance - opening_balance), 0) AS t FROM accounts`)).rows[0].t);
  const check = (r: AuditReport, name: string) => {
    const found = r.checks.find((c) => c.name === name);
    assert.ok(found, `the report has the example's ${name} check`);
    return found;
  };
  const findings = (r: AuditReport) => ({
    notApplied: r.consumers.flatMap((c) => c.notApplied.listed.map((x) => x.eventId)),
    inboxRowMissing: check(r, 'inboxRowMissing').findings.listed.map((f) => f.detail?.eventId),
    accounts: check(r, 'balanceMismatches').findings.listed.map((f) => [f.detail?.accountId, f.detail?.difference]),
  });

  it('a scheduled run over a clean pipeline reports every event applied once or parked, and no drift', async () => {
    await db.pool.query('INSERT INTO accounts (account_id, balance) SELECT g, CASE WHEN g = 1 THEN 1000 ELSE 0 END FROM generate_series(1, 5) g');
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'audit-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % 5, 'amount', 10 * g)
         FROM generate_series(1, 40) g`,
    );
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES
      ('payment_confirmed', '{"event_id":"audit-ghost","type":"payment_confirmed","account_id":999,"amount":5}'),
      ('payment_confirmed', '{"event_id":"audit-negative","type":"payment_confirmed","account_id":2,"amount":-5}'),
      ('payment_confirmed', '{"type":"payment_confirmed","account_id":2,"amount":5}')`);
    const credited = Array.from({ length: 40 }, (_, i) => 10 * (i + 1)).reduce((a, b) => a + b, 0);
    await eventually('all good events credited', async () => (await total()) === credited, 120_000);
    await eventually('the two bad events parked by the consumer', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.inbox_parked_events`)).rowCount === 2, 60_000);

    assert.deepEqual(await driftGauge(), {}, 'no audit ran yet: no drift series');
    const { workflowId, runId, report } = await triggerAuditRun(temporal.client, config.audit.scheduleId);
    clean = report;
    assert.deepEqual(await driftGauge(), { notApplied: 0, appliedWithoutOutboxRow: 0, onTopicOnly: 0, inboxRowMissing: 0, appliedDiffers: 0, balanceMismatches: 0 });
    assert.ok(workflowId.startsWith('outbox-audit-run'), workflowId);
    assert.equal(report.drift, false, JSON.stringify(report.driftCounts));
    assert.deepEqual(findings(report), { notApplied: [], inboxRowMissing: [], accounts: [] });
    assert.equal(report.outbox.events, 43);
    assert.equal(report.outbox.parked.count, 1, 'the row without an event id is parked in the outbox');
    const [payments] = report.consumers;
    assert.equal(payments!.expected, 42);
    assert.equal(payments!.applied, 40);
    assert.deepEqual(payments!.parked.listed.map((p) => p.eventId).sort(), ['audit-ghost', 'audit-negative']);
    assert.ok(payments!.parked.listed.every((p) => p.reason.length > 0), 'each parked event has its reason');
    assert.equal(check(report, 'balanceMismatches').checked, 5);
    assert.deepEqual(report.checks.map((c) => c.name), ['inboxRowMissing', 'appliedDiffers', 'balanceMismatches'], 'the example registered its checks, run in order');
    const d = await temporal.client.workflow.getHandle(workflowId, runId).describe();
    assert.deepEqual(d.searchAttributes.OutboxAuditStatus, ['clean']);
  });

  it('reports a balance changed by hand, a deleted inbox row and an event never applied, each exactly', async () => {
    assert.ok(clean, 'the clean run came first');
    await db.pool.query(`UPDATE accounts SET balance = balance + 7 WHERE account_id = 3`);
    await db.pool.query(`DELETE FROM temporal_outbox.inbox_processed_events WHERE event_id = 'audit-5'`);
    // Marked published, but the relay never sent it: no consumer will ever see it.
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload, created_at, published_at)
      VALUES ('payment_confirmed', '{"event_id":"audit-lost","type":"payment_confirmed","account_id":4,"amount":70}', now() - interval '1 minute', now() - interval '1 minute')`);

    const { workflowId, runId, report } = await triggerAuditRun(temporal.client, config.audit.scheduleId);
    assert.equal(report.drift, true);
    // The core proves delivery from the inbox alone: audit-5's inbox row is gone, so it is not
    // applied as far as the library can tell; the example's ledger check says what happened.
    assert.deepEqual(findings(report), { notApplied: ['audit-5', 'audit-lost'], inboxRowMissing: ['audit-5'], accounts: [['3', '7']] });
    assert.deepEqual(report.driftCounts, { notApplied: 2, appliedWithoutOutboxRow: 0, onTopicOnly: 0, inboxRowMissing: 1, appliedDiffers: 0, balanceMismatches: 1 });
    // As a metric, outbox_audit_drift{kind}: what alerts page on (tools/local-stack/prometheus/alerts.yml OutboxAuditDrift).
    assert.deepEqual(await driftGauge(), { notApplied: 2, appliedWithoutOutboxRow: 0, onTopicOnly: 0, inboxRowMissing: 1, appliedDiffers: 0, balanceMismatches: 1 });

    // In the UI: search attributes (list columns, `OutboxAuditStatus = 'drift'`) and current details.
    const handle = temporal.client.workflow.getHandle(workflowId, runId);
    const d = await handle.describe();
    assert.deepEqual(d.searchAttributes.OutboxAuditStatus, ['drift']);
    assert.deepEqual([...(d.searchAttributes.OutboxAuditFindings as string[])].sort(), ['account:3', 'event:audit-5', 'event:audit-lost']);
    const meta = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    for (const text of ['DRIFT', 'audit-lost', 'audit-5', 'account 3: balance']) assert.ok(meta.currentDetails?.includes(text), `current details mention ${text}:\n${meta.currentDetails}`);

    // In the doctor, naming the same ids.
    const [check] = await runChecks({ db: db.pool, config, temporal: temporal.client }, [auditScheduleCheck]);
    assert.equal(check!.status, 'fail');
    for (const text of ['audit-lost', 'audit-5', 'account 3']) assert.ok(check!.problems[0]!.message.includes(text), check!.problems[0]!.message);

    // And from the CLI, which exits non-zero on drift.
    const cli = await run(process.execPath, [...nodeScript('src/cli/main.ts'), 'audit', 'last'], { cwd: PROJECT_ROOT, env: { ...process.env, ...env } }).then(
      () => assert.fail('audit last must exit 1 on drift'),
      (err: { code: number; stdout: string }) => err,
    );
    assert.equal(cli.code, 1);
    assert.match(cli.stdout, /event audit-lost .* never applied/);
    assert.match(cli.stdout, /account 3: balance/);
  });

  it('the schedule is the documented one: interval, overlap skip, the audit workflow', async () => {
    const d = await temporal.client.schedule.getHandle(config.audit.scheduleId).describe();
    const expected = auditScheduleOptions(config);
    assert.equal(d.action.type === 'startWorkflow' && d.action.workflowType, AUDIT_WORKFLOW);
    assert.equal(d.action.type === 'startWorkflow' && d.action.taskQueue, expected.action.taskQueue);
    assert.ok(d.info.numActionsTaken >= 2);
  });
});

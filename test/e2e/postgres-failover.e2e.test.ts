import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Client, Connection } from '@temporalio/client';
import { loadConfig, PROJECT_ROOT } from '../../src/config/env';
import { HEADERS } from '../../src/kafka/message-format';
import type { RepairFindings } from '../../src/audit/repair';
import { AUDIT_WORKFLOW, type AuditWorkflow } from '../../workflows/audit/contract';
import { pauseSignal, resumeSignal, statusQuery } from '../../workflows/relay/contract';
import { startAuditWorker } from '../kit/audit-worker';
import { consumerEnv, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { creditEvents, insertEvents, steadyTraffic, tallyFailover, type CreditEvent } from '../kit/failover-traffic';
import { FailoverRig } from '../kit/failover-rig';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);
const CONSUMER = 'payments-credit';
const ACCOUNTS = Array.from({ length: 10 }, (_, i) => 7000 + i);

// A managed PostgreSQL failing over while events flow, with real relay and consumer worker
// processes and a plain-SQL producer: a streaming replica (pg_basebackup) is promoted, the
// primary is gone (kill -9), and the one address every client uses moves to the replica,
// dropping every connection made before (test/kit/failover-rig.ts). Kafka and Temporal are the
// shared stack's. What each mode of replication does to each guarantee: docs/guarantees.md,
// "PostgreSQL failover".
describe('PostgreSQL failover: a streaming replica promoted while events flow', function () {
  this.timeout(600_000);
  let temporal: { client: Client; connection: Connection };
  let rig: FailoverRig | undefined;
  let topic: { topic: string; remove(): Promise<void> } | undefined;
  let relay: RelayProcess | undefined;
  const consumers: ConsumerProcess[] = [];
  const kafka = testKafka();

  before(async () => {
    temporal = await testTemporalClient();
  });
  after(async () => temporal?.connection.close());
  afterEach(async () => {
    await terminateStartedShards();
    await relay?.kill9();
    for (const c of consumers.splice(0)) await c.stop('SIGKILL');
    await topic?.remove();
    await rig?.close();
  });

  const startRelay = async (r: FailoverRig, t: string, shardCount = 1) => {
    const taskQueue = uniqueName('failover-relay');
    relay = new RelayProcess({ DATABASE_URL: r.url, KAFKA_TOPIC: t, RELAY_TASK_QUEUE: taskQueue, METRICS_PORT_BASE: '0' });
    await relay.waitUntilRunning();
    const shards = [];
    for (let shardIndex = 0; shardIndex < shardCount; shardIndex++) shards.push(await startShard(temporal.client, taskQueue, { shardIndex, shardCount, batchSize: 100 }));
    return shards;
  };
  const startConsumer = async (r: FailoverRig, t: string, group: string) => {
    const c = spawnConsumer(consumerEnv({ databaseUrl: r.url, topic: t, group, taskQueue: uniqueName('failover-consumer'), partitions: 3, extra: { METRICS_PORT_BASE: '0' } }));
    consumers.push(c);
    await waitUntilRunning(c);
    return c;
  };
  /** A check that a failover may interrupt: an error is a "not yet". */
  const settled = (check: () => Promise<boolean>) => () => check().catch(() => false);
  const count = async (sql: string, values: unknown[]) => Number((await rig!.pool.query<{ n: number }>(sql, values)).rows[0]!.n);
  const ids = (events: CreditEvent[]) => events.map((e) => e.event_id);
  const published = (events: CreditEvent[]) =>
    count(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL AND payload ->> 'event_id' = ANY($1::text[])`, [ids(events)]);
  const applied = (events: CreditEvent[]) => count(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events WHERE consumer = $1 AND event_id = ANY($2::text[])`, [CONSUMER, ids(events)]);

  it('synchronous standby: every acknowledged commit survives, even with WAL shipping cut before the primary dies; lost 0, double-applied 0', async () => {
    rig = await FailoverRig.create({ synchronous: true, accounts: ACCOUNTS });
    topic = await createTestTopic(3);
    await startRelay(rig, topic.topic);
    const consumer = await startConsumer(rig, topic.topic, uniqueName('failover-sync'));
    const at = { failoverStarted: 0, failoverDone: 0, firstCommitAfter: 0 };
    let ackedAfterCut: number | undefined;
    const traffic = steadyTraffic(rig.pool, { prefix: 'sync', accounts: ACCOUNTS, everyMs: 40, perTransaction: 5 });
    try {
      await eventually('200 events applied before the failover', settled(async () => (await count(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events`, [])) >= 200), 120_000);
      // The worst moment for a standby: it stops receiving WAL while commits keep coming (a
      // partition between the zones), and the primary dies 2 s later. Synchronous, the primary
      // acknowledges nothing it could not ship: every COMMIT of those 2 s waits, then fails.
      await rig.stopShipping();
      const atCut = traffic.acknowledged.length;
      await sleep(2000);
      ackedAfterCut = traffic.acknowledged.length - atCut;
      at.failoverStarted = Date.now();
      await rig.failover();
      at.failoverDone = Date.now();
      const atFailover = traffic.acknowledged.length;
      await eventually('a producer commit on the promoted replica', async () => traffic.acknowledged.length > atFailover, 60_000, 20);
      at.firstCommitAfter = Date.now();
      await eventually('producers committing on the promoted replica', async () => traffic.acknowledged.length >= atFailover + 200, 120_000);
    } finally {
      await traffic.stop();
    }
    assert.ok(traffic.failed > 0, 'the failover interrupted the producer');

    const { rows } = await rig.pool.query<{ payload: CreditEvent }>(`SELECT payload FROM temporal_outbox.outbox_events`);
    const committed = rows.map((r) => r.payload);
    const onNewPrimary = new Set(ids(committed));
    assert.deepEqual(ids(traffic.acknowledged).filter((id) => !onNewPrimary.has(id)), [], 'no acknowledged commit is missing on the promoted replica');
    assert.ok(ackedAfterCut! <= 5, `at most the one transaction already shipped is acknowledged after the cut (${ackedAfterCut} events)`);
    // Commits whose acknowledgement the failover cut off may be there too: they must be applied as well.
    await eventually('every event on the promoted replica applied', settled(async () => (await tallyFailover(rig!.pool, CONSUMER, committed)).lost.length === 0), 180_000).catch(async (err: Error) => {
      const t = await tallyFailover(rig!.pool, CONSUMER, committed).catch((e: Error) => e.message);
      const pending = await count(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`, []).catch((e: Error) => e.message);
      throw new Error(`${err.message}\ntally: ${JSON.stringify(t).slice(0, 500)}\npending: ${pending}\nrelay: ${relay!.logLines.slice(-15).join('\n')}\n${relay!.stderr.slice(-1500)}\nconsumer: ${consumer.logs.slice(-15).map((l) => JSON.stringify(l)).join('\n')}\n${consumer.stderr.join('').slice(-1500)}`);
    });
    const allApplied = Date.now();
    const tally = await tallyFailover(rig.pool, CONSUMER, committed);
    assert.deepEqual({ lost: tally.lost.length, doubleApplied: tally.doubleApplied, underApplied: tally.underApplied }, { lost: 0, doubleApplied: 0, underApplied: 0 });
    assert.equal(await count(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`, []), 0, 'the relay drained the outbox on the promoted replica');
    process.stdout.write(
      `      [failover] ${traffic.acknowledged.length} events acknowledged, ${committed.length} committed (${committed.length - traffic.acknowledged.length} whose COMMIT's answer the failover cut off), ` +
        `${traffic.failed} producer transactions failed, ${ackedAfterCut} events acknowledged in the 2 s between the cut and the kill; kill → promoted → address moved ${at.failoverDone - at.failoverStarted} ms, → first producer commit ${at.firstCommitAfter - at.failoverStarted} ms, ` +
        `→ everything applied ${allApplied - at.failoverStarted} ms (traffic ran on to the 200th event after); lost ${tally.lost.length}, double-applied ${tally.doubleApplied}\n`,
    );
    assert.equal(relay!.child.exitCode, null, 'the relay worker rode through the failover');
    assert.equal(consumer.proc.exitCode, null, 'the consumer worker rode through the failover');
  });

  it('asynchronous standby: unshipped commits are gone; the audit finds every gap and `audit repair` closes it', async () => {
    const testStart = new Date(Date.now() - 60_000).toISOString();
    rig = await FailoverRig.create({ synchronous: false, accounts: ACCOUNTS });
    topic = await createTestTopic(3);
    const group = uniqueName('failover-async');
    // Two shards: shard 0 is held back (paused) for D and E, shard 1 publishes A meanwhile.
    const [shard0] = await startRelay(rig, topic.topic, 2);
    const { rows: placed } = await rig.pool.query<{ a: string; shard: number }>(`SELECT a::text, (hashtext(a::text) & 2147483647) % 2 AS shard FROM unnest($1::bigint[]) a`, [ACCOUNTS]);
    const onShard = (i: number) => placed.filter((p) => p.shard === i).map((p) => Number(p.a));
    assert.ok(onShard(0).length > 0 && onShard(1).length > 0, 'both shards have accounts');
    await shard0!.signal(pauseSignal, { reason: 'test: hold D and E back until the cut' });
    await eventually('shard 0 paused', async () => (await shard0!.query(statusQuery)).state === 'paused', 60_000);

    // E: on Kafka and applied before the cut, but not marked: the relay's crash gap (sent, not
    // marked), here made by sending E's messages as the relay would.
    const E = creditEvents('async-e', 20, onShard(0));
    await insertEvents(rig.pool, E);
    await produceEvents(kafka, topic.topic, E);
    const first = await startConsumer(rig, topic.topic, group);
    await eventually('E applied and its offsets committed', async () => (await applied(E)) === E.length && (await groupCaughtUp(kafka, group, topic!.topic)), 120_000);
    await first.stop('SIGTERM');
    // A: published and marked before the cut, applied only after it.
    const A = creditEvents('async-a', 20, onShard(1));
    await insertEvents(rig.pool, A);
    await eventually('A published', async () => (await published(A)) === A.length, 60_000);
    // D: committed before the cut, published and marked only after it.
    const D = creditEvents('async-d', 20, onShard(0));
    await insertEvents(rig.pool, D);
    await rig.caughtUp();
    await rig.stopShipping();

    // The window the replica never sees: D and E marked, B committed and published, A, B and D
    // applied (E's second copies absorbed).
    await shard0!.signal(resumeSignal, { reason: 'test: the cut is made' });
    const B = creditEvents('async-b', 20, ACCOUNTS);
    await insertEvents(rig.pool, B);
    await eventually('A, B, D and E published', async () => (await published([...A, ...B, ...D, ...E])) === 80, 60_000);
    const second = await startConsumer(rig, topic.topic, group);
    await eventually('A, B and D applied and their offsets committed', async () => (await applied([...A, ...B, ...D])) === 60 && (await groupCaughtUp(kafka, group, topic!.topic)), 120_000);
    await second.stop('SIGTERM');
    // C: committed and published in the window, not yet consumed when the primary dies.
    const C = creditEvents('async-c', 20, ACCOUNTS);
    await insertEvents(rig.pool, C);
    await eventually('C published', async () => (await published(C)) === C.length, 60_000);

    await rig.failover();
    const third = await startConsumer(rig, topic.topic, group);
    await eventually(
      'the pipeline settled on the promoted replica: C and D applied, nothing pending, the group caught up',
      settled(async () =>
        (await applied([...C, ...D])) === 40 &&
        (await count(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`, [])) === 0 &&
        (await groupCaughtUp(kafka, group, topic!.topic))),
      180_000,
    );

    // What the failover did, kind by kind (docs/guarantees.md, "PostgreSQL failover").
    const before = await tallyFailover(rig.pool, CONSUMER, [...A, ...C, ...D, ...E]);
    assert.deepEqual(before.missingOutboxRows.sort(), ids([...C]).sort(), 'of the events that are applied, C lost its outbox row');
    assert.deepEqual((await tallyFailover(rig.pool, CONSUMER, B)).missingOutboxRows.length, 20, 'B, acknowledged to its producer, is gone from the outbox');
    assert.equal(await applied(B), 0, 'B is applied nowhere: its inbox rows went with it and the offset is past it');
    assert.deepEqual(before.lost.sort(), ids(A).sort(), 'A is published, and never applied: the consumer\'s offset is past it');
    assert.deepEqual({ doubleApplied: before.doubleApplied }, { doubleApplied: 0 }, 'D and E, their marks lost, were published again and applied once');
    const absorbed = (c: ConsumerProcess) => c.logs.reduce((sum, l) => sum + (typeof l.duplicates === 'number' ? l.duplicates : 0), 0);
    assert.deepEqual([absorbed(second), absorbed(third)], [20, 20], 'E\'s repeats absorbed by the inbox: its row survived the failover, its mark did not');
    const copies = new Map<string, number>();
    for (const m of await readWholeTopic(topic.topic, 60_000, kafka)) copies.set(m.headers[HEADERS.eventId]!, (copies.get(m.headers[HEADERS.eventId]!) ?? 0) + 1);
    assert.deepEqual(ids(D).map((id) => copies.get(id)), Array(20).fill(2), 'each D event is on the topic twice');
    assert.deepEqual(ids(E).map((id) => copies.get(id)), Array(20).fill(3), 'each E event three times: sent unmarked, re-sent and marked in the window, re-sent after the failover');
    assert.deepEqual(ids([...A, ...B, ...C]).map((id) => copies.get(id)), Array(60).fill(1));

    // The scheduled audit's run reports every kind by id: A published and not applied, C applied
    // with no outbox row, B only on the topic.
    const auditConfig = loadConfig({ ...process.env, DATABASE_URL: rig.url, KAFKA_TOPIC: topic.topic, AUDIT_TASK_QUEUE: uniqueName('failover-audit') });
    const auditWorker = await startAuditWorker(auditConfig);
    let auditedNotApplied: number | undefined;
    try {
      const report = await temporal.client.workflow.execute<AuditWorkflow>(AUDIT_WORKFLOW, {
        taskQueue: auditConfig.audit.taskQueue,
        workflowId: uniqueName('failover-audit'),
        args: [{ windowMs: 15 * 60_000, settleMs: 0, consumers: [{ consumer: CONSUMER, eventTypes: ['payment_confirmed'] }] }],
      });
      assert.equal(report.drift, true);
      auditedNotApplied = report.driftCounts.notApplied;
      assert.deepEqual(report.consumers[0]!.notApplied.listed.map((n) => n.eventId).sort(), ids(A).sort());
      assert.deepEqual(report.consumers[0]!.appliedWithoutOutboxRow?.listed.map((n) => n.eventId).sort(), ids(C).sort());
      assert.deepEqual((report.topics ?? []).flatMap((t) => t.onTopicOnly.listed.map((n) => n.eventId)).sort(), ids(B).sort());
      assert.deepEqual(report.driftCounts, { notApplied: 20, appliedWithoutOutboxRow: 20, onTopicOnly: 20, inboxRowMissing: 0, appliedDiffers: 0, balanceMismatches: 0 });
    } finally {
      await auditWorker.close();
    }

    // `audit repair` finds the same three kinds: it re-publishes A and lists C and B for a person.
    const cli = (...args: string[]) =>
      run(process.execPath, [...nodeScript('src/cli/main.ts'), 'audit', 'repair', '--since', testStart, '--settle-ms', '0', '--json', ...args], {
        cwd: PROJECT_ROOT,
        env: { ...process.env, DATABASE_URL: rig!.url, KAFKA_TOPIC: topic!.topic, AUDIT_CONSUMERS: `${CONSUMER}=payment_confirmed` },
      }).then(
        (r) => ({ code: 0, findings: JSON.parse(r.stdout) as RepairFindings & { republished: number[] } }),
        (e: { code: number; stdout: string }) => ({ code: e.code, findings: JSON.parse(e.stdout) as RepairFindings & { republished: number[] } }),
      );
    const dry = await cli('--dry-run');
    assert.equal(dry.code, 1);
    assert.deepEqual(dry.findings.unapplied.map((u) => u.eventId).sort(), ids(A).sort(), 'published, never applied: exactly A');
    assert.deepEqual(dry.findings.appliedWithoutOutboxRow.map((u) => u.eventId).sort(), ids(C).sort(), 'applied with no outbox row: exactly C');
    assert.deepEqual(dry.findings.onTopicOnly!.map((t) => t.eventId).sort(), ids(B).sort(), 'on the topic, in no table: exactly B');
    assert.deepEqual(dry.findings.republished, []);
    assert.equal(await applied(A), 0, 'a dry run changes nothing');

    const repair = await cli();
    assert.equal(repair.code, 1, 'B and C remain for a person to settle');
    assert.equal(repair.findings.republished.length, 20);
    await eventually('A applied after the repair', async () => (await applied(A)) === A.length, 120_000);
    await eventually('nothing pending', async () => (await count(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`, [])) === 0, 60_000);
    const after = await tallyFailover(rig.pool, CONSUMER, [...A, ...C, ...D, ...E]);
    assert.deepEqual({ lost: after.lost, doubleApplied: after.doubleApplied, underApplied: after.underApplied }, { lost: [], doubleApplied: 0, underApplied: 0 });
    process.stdout.write(
      `      [failover] lost with the unshipped WAL: 20 inbox rows behind committed offsets (A), 40 marks (D, E), 40 acknowledged events (B, C); ` +
        `found: audit run ${auditedNotApplied} not applied, repair ${dry.findings.unapplied.length} unapplied / ${dry.findings.appliedWithoutOutboxRow.length} applied without outbox row / ${dry.findings.onTopicOnly!.length} on the topic only; ` +
        `after the repair lost ${after.lost.length}, double-applied ${after.doubleApplied}\n`,
    );
    const again = await cli('--dry-run');
    assert.deepEqual(again.findings.unapplied, [], 'the repair leaves nothing unapplied');
  });
});

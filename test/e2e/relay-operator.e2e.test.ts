import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { relayWorkflowId } from '../../src/config/constants';
import { PROJECT_ROOT } from '../../src/config/env';
import { cachePaths } from '../../tools/local-stack/paths';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { temporalCli } from '../../tools/local-stack/temporal-cli';
import { pauseSignal, redriveUpdate, resumeSignal, statusQuery } from '../../workflows/relay/contract';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, type InProcessRelay } from '../kit/relay-harness';
import { eventually } from '../kit/wait';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);

// Pause, resume and re-drive as an operator does them: `npx temporal-outbox relay pause|resume|redrive`
// against real Temporal, PostgreSQL and Kafka. The CLI addresses the fixed shard ids, so the test
// has a namespace of its own (nothing else on the shared dev server sees these shards).
describe('relay pause, resume and redrive through Temporal (CLI)', function () {
  this.timeout(300_000);
  const namespace = uniqueName('relay-op');
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: InProcessRelay;
  let connection: Connection;
  let client: Client;
  let cliEnv: NodeJS.ProcessEnv;

  const outboxCli = (...args: string[]) =>
    run(process.execPath, [...nodeScript('src/cli/main.ts'), ...args], { cwd: PROJECT_ROOT, env: cliEnv });
  const insert = (prefix: string, from: number, to: number) =>
    db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', $1 || g, 'type', 'payment_confirmed', 'account_id', g, 'amount', 100)
         FROM generate_series($2::int, $3::int) g`,
      [prefix, from, to],
    );
  /** Event ids of rows matching `where`, for one shard of two (the relay's own shard filter). */
  const eventIds = async (shard: number, where: string) =>
    (await db.pool.query<{ e: string }>(`SELECT payload->>'event_id' AS e FROM temporal_outbox.outbox_events WHERE (shard_hash & 2147483647) % 2 = $1 AND ${where} ORDER BY id`, [shard])).rows.map((r) => r.e);
  const onTopic = async () => (await readWholeTopic(topic.topic)).map((m) => m.headers['event-id']!);
  const status = (shard: number) => client.workflow.getHandle(relayWorkflowId(shard)).query(statusQuery);
  const history = async (shard: number) => (await client.workflow.getHandle(relayWorkflowId(shard)).fetchHistory()).events ?? [];

  before(async () => {
    const base = loadStackConfig();
    const cli = temporalCli(base, cachePaths(base.local.cacheDir), () => undefined);
    await run(cli, ['operator', 'namespace', 'create', '--namespace', namespace, '--address', base.temporal.address]);
    connection = await Connection.connect({ address: base.temporal.address });
    await eventually('namespace usable', async () => ensureSearchAttributes(connection, namespace).then(() => true, () => false), 30_000, 500);
    client = new Client({ connection, namespace });
    db = await createTestDatabase();
    topic = await createTestTopic(2);
    const config = relayTestConfig(db.url, topic.topic, { TEMPORAL_NAMESPACE: namespace });
    relay = await startInProcessRelay(config);
    cliEnv = { ...process.env, DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, TEMPORAL_NAMESPACE: namespace, RELAY_TASK_QUEUE: relay.taskQueue, RELAY_SHARDS: '2' };
    assert.match((await outboxCli('relay', 'start')).stdout, /started \[0, 1\]/);
  });
  after(async () => {
    for (const i of [0, 1]) await client?.workflow.getHandle(relayWorkflowId(i)).terminate('test finished').catch(() => undefined);
    await relay?.close();
    await connection?.close();
    await topic?.remove();
    await db?.drop();
    const base = loadStackConfig();
    await run(temporalCli(base, cachePaths(base.local.cacheDir), () => undefined), ['operator', 'namespace', 'delete', '--namespace', namespace, '--address', base.temporal.address, '--yes']).catch(() => undefined);
  });

  it('a paused shard publishes nothing while events are enqueued; the other keeps going; resumed, it drains them', async () => {
    await insert('warm-', 1, 20);
    await eventually('warm-up rows published', async () => (await eventIds(0, 'published_at IS NULL')).length + (await eventIds(1, 'published_at IS NULL')).length === 0, 60_000);
    assert.notEqual((await status(0)).state, 'paused', 'shard 0 is not paused before the command');

    const paused = await outboxCli('relay', 'pause', '--shard', '0', '--reason', 'test: hold shard 0');
    assert.match(paused.stdout, /shard 0: paused/);
    const s0 = await status(0);
    assert.equal(s0.state, 'paused');
    assert.equal(s0.paused?.reason, 'test: hold shard 0');
    assert.notEqual((await status(1)).state, 'paused', 'only the named shard pauses');

    await insert('held-', 21, 80);
    const held = await eventIds(0, `payload->>'event_id' LIKE 'held-%'`);
    const flowing = await eventIds(1, `payload->>'event_id' LIKE 'held-%'`);
    assert.ok(held.length > 0 && flowing.length > 0, 'the new rows fall on both shards');
    await eventually('shard 1 publishes its new rows', async () => (await eventIds(1, 'published_at IS NULL')).length === 0, 60_000);
    // Shard 1 has had its chance; give shard 0 the same time again before looking.
    await sleep(3_000);
    assert.deepEqual(await eventIds(0, 'published_at IS NULL'), held, 'every new row of the paused shard is still pending');
    const whileHeld = new Set(await onTopic());
    assert.deepEqual(held.filter((id) => whileHeld.has(id)), [], 'nothing of the paused shard reached Kafka');
    assert.ok(flowing.every((id) => whileHeld.has(id)), 'the other shard published its rows');

    assert.match((await outboxCli('relay', 'status')).stdout, /"state":"paused"/);
    assert.match((await outboxCli('relay', 'resume', '--shard', '0')).stdout, /shard 0: (running|idle)/);
    await eventually('the resumed shard drains what was enqueued', async () => (await eventIds(0, 'published_at IS NULL')).length === 0, 60_000);
    const after = await onTopic();
    for (const id of held) assert.equal(after.filter((x) => x === id).length, 1, `${id} published exactly once`);

    const signals = (await history(0)).filter((e) => e.workflowExecutionSignaledEventAttributes).map((e) => e.workflowExecutionSignaledEventAttributes!.signalName);
    assert.deepEqual(signals, [pauseSignal.name, resumeSignal.name], 'both actions are in the shard history');
  });

  it('pauses and resumes every shard at once', async () => {
    const paused = await outboxCli('relay', 'pause');
    assert.match(paused.stdout, /shard 0: paused\nshard 1: paused/);
    await insert('all-', 81, 100);
    await sleep(3_000);
    assert.equal((await eventIds(0, `published_at IS NULL AND payload->>'event_id' LIKE 'all-%'`)).length + (await eventIds(1, `published_at IS NULL AND payload->>'event_id' LIKE 'all-%'`)).length, 20, 'nothing published while all shards are paused');
    await outboxCli('relay', 'resume');
    await eventually('all rows published after resume', async () => (await eventIds(0, 'published_at IS NULL')).length + (await eventIds(1, 'published_at IS NULL')).length === 0, 60_000);
  });

  it('re-drives a parked row through the shard’s update: published once, recorded in history', async () => {
    const { rows } = await db.pool.query<{ id: string }>(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"type":"payment_confirmed","account_id":7,"amount":5}') RETURNING id`);
    const id = Number(rows[0]!.id);
    await eventually('the malformed row is parked', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE id = $1 AND parked_at IS NOT NULL`, [id])).rowCount === 1, 60_000);
    // The operator fixes the row, then re-drives it.
    await db.pool.query(`UPDATE temporal_outbox.outbox_events SET payload = payload || '{"event_id":"fixed-1"}' WHERE id = $1`, [id]);
    await sleep(1_000);
    assert.ok(!(await onTopic()).includes('fixed-1'), 'a parked row stays off Kafka until re-driven');

    const shard = Number((await db.pool.query(`SELECT (shard_hash & 2147483647) % 2 AS s FROM temporal_outbox.outbox_events WHERE id = $1`, [id])).rows[0].s);
    assert.match((await outboxCli('relay', 'redrive', '--id', String(id), '--reason', 'payload fixed')).stdout, new RegExp(`re-driven: ${id}$`, 'm'));
    await eventually('the re-driven row is published', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE id = $1 AND published_at IS NOT NULL`, [id])).rowCount === 1, 60_000);
    assert.equal((await onTopic()).filter((x) => x === 'fixed-1').length, 1, 'published exactly once');
    assert.match((await outboxCli('relay', 'redrive', '--id', String(id))).stdout, /nothing to re-drive/);

    const events = await history(shard);
    const updates = events.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes).map((e) => e.workflowExecutionUpdateAcceptedEventAttributes!.acceptedRequest?.input?.name);
    assert.deepEqual(updates, [redriveUpdate.name, redriveUpdate.name], 'each redrive is an update in the owning shard history');
    assert.ok(events.some((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'redriveParked'), 'run as an activity of the shard');
  });
});

import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { restartShards, startRelays, stuckShards } from '../../src/outbox/relay-control';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { RELAY_SHARD_WORKFLOW, type RelayShardWorkflow } from '../../workflows/relay/contract';

// After a deploy that changed the relay's workflow code under a running shard, the shard's
// workflow task fails on every attempt. `relay restart --stuck-only` must find it and bring it
// back with the current code, losing nothing: progress lives in outbox_events.
describe('relay restart of a stuck shard', function () {
  this.timeout(180_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: Awaited<ReturnType<typeof createTestTopic>>;
  let relay: InProcessRelay | undefined;
  const ids = [uniqueName('stuck-shard-0')];

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    topic = await createTestTopic(1);
  });
  after(async () => {
    for (const id of ids) await temporal.client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
    await relay?.close();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  it('finds the shard whose workflow task keeps failing and restarts it with working code', async () => {
    const config = relayTestConfig(db.url, topic.topic);
    const control = { client: temporal.client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: 100, workflowId: (i: number) => ids[i]! };
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"event_id":"before-restart","account_id":1,"amount":5}')`);

    // The "old code": a worker whose relayShardWorkflow fails every workflow task.
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const broken = await Worker.create({ connection, namespace: config.temporal.namespace, taskQueue: control.taskQueue, workflowsPath: require.resolve('../fixtures/stuck-relay-workflow') });
    await broken.runUntil(async () => {
      await temporal.client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, { taskQueue: control.taskQueue, workflowId: ids[0]!, args: [{ shardIndex: 0, shardCount: 1, batchSize: 100 }] });
      await eventually('the shard to be seen as stuck', async () => (await stuckShards(control, 1)).length === 1, 120_000, 500);
    });
    await connection.close();
    assert.equal((await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL')).rows[0].n, 1, 'nothing published while stuck');

    // The "new code": the real relay worker; restart brings the shard back and it drains the table.
    relay = await startInProcessRelay(config);
    assert.deepEqual(await restartShards(control, [0], 1), [0]);
    await eventually('the row published after the restart', async () => (await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL')).rows[0].n === 0);
    assert.deepEqual(await stuckShards(control, 1), []);
    const messages = await readWholeTopic(topic.topic);
    assert.deepEqual(messages.map((m) => JSON.parse(m.value).event_id), ['before-restart']);
  });
});

// `relay restart` of a healthy shard asks it to stop instead of terminating it: the batch in hand
// finishes (nothing published twice) and the old run completes, so it also leaves the workers'
// workflow caches (a terminated run stays cached: docs/relay.md, Memory).
describe('relay restart of a healthy shard', function () {
  this.timeout(120_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: Awaited<ReturnType<typeof createTestTopic>>;
  let relay: InProcessRelay | undefined;
  const shardId = uniqueName('healthy-shard-0');

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    topic = await createTestTopic(1);
  });
  after(async () => {
    await temporal.client.workflow.getHandle(shardId).terminate('test over').catch(() => undefined);
    await relay?.close();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const pendingCount = async () => (await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL')).rows[0].n as number;
  const insertEvent = (eventId: string) =>
    db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [JSON.stringify({ event_id: eventId, account_id: 1, amount: 5 })]);

  it('stops the old run (completed, not terminated) and starts a new one that keeps publishing, each event once', async () => {
    const config = relayTestConfig(db.url, topic.topic);
    const control = { client: temporal.client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: 100, workflowId: () => shardId };
    relay = await startInProcessRelay(config);
    await startRelays(control, 1);
    const firstRunId = (await temporal.client.workflow.getHandle(shardId).describe()).runId;
    await insertEvent('before-restart');
    await eventually('the first event published', async () => (await pendingCount()) === 0);

    assert.deepEqual(await restartShards(control, [0], 1), [0]);

    assert.equal((await temporal.client.workflow.getHandle(shardId, firstRunId).describe()).status.name, 'COMPLETED');
    const current = await temporal.client.workflow.getHandle(shardId).describe();
    assert.equal(current.status.name, 'RUNNING');
    assert.notEqual(current.runId, firstRunId);
    await insertEvent('after-restart');
    await eventually('the second event published by the new run', async () => (await pendingCount()) === 0);
    const messages = await readWholeTopic(topic.topic);
    assert.deepEqual(messages.map((m) => JSON.parse(m.value).event_id), ['before-restart', 'after-restart']);
  });
});

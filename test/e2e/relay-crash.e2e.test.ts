import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { HEADERS } from '../../src/kafka/message-format';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// kill -9 of a real relay worker process at the two moments that matter. The worker is the
// production one with its activities wrapped by this test's fixture
// (test/fixtures/relay-worker-fault-point.ts), which stops it dead at the exact point; then this
// test kills it with SIGKILL — no cleanup, no finally blocks run, as in a real crash.
describe('relay crash safety: kill -9 of the worker', function () {
  this.timeout(240_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let workers: RelayProcess[] = [];

  before(async () => {
    temporal = await testTemporalClient();
  });
  after(async () => temporal?.connection.close());
  beforeEach(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
  });
  afterEach(async () => {
    await terminateStartedShards();
    for (const w of workers) await w.kill9();
    workers = [];
    await topic.remove();
    await db.drop();
  });

  const seedTen = () =>
    db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'crash-' || g, 'type', 'payment_confirmed', 'account_id', g, 'amount', 10)
         FROM generate_series(1, 10) g`,
    );
  const unpublished = async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n);

  it('after Kafka acked a batch but before Temporal heard of it: the batch is published twice, marked once, nothing lost', async () => {
    const taskQueue = uniqueName('relay-crash-tq');
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue };
    const doomed = RelayProcess.pausingAt('after-kafka-ack', env);
    workers.push(doomed);
    await seedTen();
    await startShard(temporal.client, taskQueue, { batchSize: 100 });

    const at = await doomed.waitForFaultPoint();
    assert.equal(at.ids, 10);
    // The dangerous moment: Kafka has every message, the outbox still says "pending".
    assert.equal((await readWholeTopic(topic.topic)).length, 10);
    assert.equal(await unpublished(), 10);
    await doomed.kill9();

    workers.push(new RelayProcess(env));
    // The dead worker's relay session stops heartbeating and times out (10 s); the workflow places
    // the shard on the survivor, whose session finds the batch still pending: it re-sends it, then
    // marks it. (With local activities the workflow task times out and the survivor replays.)
    await eventually('every row marked published', async () => (await unpublished()) === 0, 90_000);
    const messages = await readWholeTopic(topic.topic);
    const counts = new Map<string, number>();
    for (const m of messages) counts.set(m.headers[HEADERS.eventId]!, (counts.get(m.headers[HEADERS.eventId]!) ?? 0) + 1);
    assert.equal(counts.size, 10, 'nothing lost');
    assert.deepEqual([...counts.values()], Array(10).fill(2), 'every event of the batch is on the topic twice: at-least-once');
  });

  it('before the mark, relay session (default): the survivor\'s session re-sends the batch, then marks it; nothing lost', async () => {
    const taskQueue = uniqueName('relay-crash-tq');
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue };
    const doomed = RelayProcess.pausingAt('before-mark', env);
    workers.push(doomed);
    await seedTen();
    await startShard(temporal.client, taskQueue, { batchSize: 100 });

    await doomed.waitForFaultPoint();
    // Killed at once: Kafka has the batch, the mark never ran, and the session's result never
    // reached Temporal.
    await doomed.kill9();
    assert.equal((await readWholeTopic(topic.topic)).length, 10);
    assert.equal(await unpublished(), 10);

    workers.push(new RelayProcess(env));
    // The session times out (heartbeat, 10 s); the survivor's session finds the same ten rows
    // still pending (its shard lock was freed when the killed worker's connection closed) and
    // re-sends them.
    await eventually('every row marked published', async () => (await unpublished()) === 0, 90_000);
    const counts = new Map<string, number>();
    for (const m of await readWholeTopic(topic.topic)) counts.set(m.headers[HEADERS.eventId]!, (counts.get(m.headers[HEADERS.eventId]!) ?? 0) + 1);
    assert.equal(counts.size, 10, 'nothing lost');
    assert.deepEqual([...counts.values()], Array(10).fill(2), 'the batch is on the topic twice: at-least-once');
  });

  it('before the mark, local activities (the mode before sessions): a survivor replays the shard, re-sends the whole batch, marks it; nothing lost', async () => {
    const taskQueue = uniqueName('relay-crash-tq');
    const env = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue };
    const doomed = RelayProcess.pausingAt('before-mark', env);
    workers.push(doomed);
    await seedTen();
    await startShard(temporal.client, taskQueue, { batchSize: 100, activityMode: 'local' });

    await doomed.waitForFaultPoint();
    assert.equal((await readWholeTopic(topic.topic)).length, 10);
    assert.equal(await unpublished(), 10);
    await doomed.kill9();

    workers.push(new RelayProcess(env));
    // The killed worker held the shard's workflow task; it times out (5 s) and the survivor
    // replays the run. Whether the publish's result reached history first depends on whether the
    // worker's task heartbeat (every 4 s while local activities run) fell between publish and
    // kill: if not, the survivor re-sends the batch; if so, it replays the publish and only
    // marks. Either way the batch moves as one: every event the same number of times, none lost.
    await eventually('every row marked published', async () => (await unpublished()) === 0, 90_000);
    const counts = new Map<string, number>();
    for (const m of await readWholeTopic(topic.topic)) counts.set(m.headers[HEADERS.eventId]!, (counts.get(m.headers[HEADERS.eventId]!) ?? 0) + 1);
    assert.equal(counts.size, 10, 'nothing lost');
    const copies = new Set(counts.values());
    assert.equal(copies.size, 1, `the batch was re-sent as a whole or not at all: ${JSON.stringify([...counts])}`);
    assert.ok([1, 2].includes([...copies][0]!), 'at most one re-send');
  });
});

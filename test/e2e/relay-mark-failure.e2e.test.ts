import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// A relay session marks a batch published while it polls and sends the next one. When that mark
// fails (here: the relay's role may no longer set published_at, a real PostgreSQL refusal; in the
// network soak, the healthy relay's marks timing out on a loaded machine right after it took
// every shard over), the failure must end the session, not the worker process: a rejection
// nobody awaits yet ends a Node process.
describe('relay: a mark that fails while the next batch is being sent', function () {
  this.timeout(180_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let worker: RelayProcess | undefined;

  before(async () => {
    temporal = await testTemporalClient();
  });
  after(async () => temporal?.connection.close());
  beforeEach(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(1);
  });
  afterEach(async () => {
    await terminateStartedShards();
    await worker?.kill9();
    worker = undefined;
    await db.pool.query('GRANT UPDATE (published_at) ON temporal_outbox.outbox_events TO outbox_relay, temporal_outbox_relay').catch(() => undefined);
    await topic.remove();
    await db.drop();
  });

  const unpublished = async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n);

  it('keeps the worker process running; the batches are marked once marking works again', async () => {
    const taskQueue = uniqueName('relay-mark-tq');
    worker = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: taskQueue });
    await worker.waitUntilRunning();
    // Marks are refused from now on; polls and sends are not.
    await db.pool.query('REVOKE UPDATE (published_at) ON temporal_outbox.outbox_events FROM outbox_relay, temporal_outbox_relay');
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'mark-' || g, 'type', 'payment_confirmed', 'account_id', g, 'amount', 10)
         FROM generate_series(1, 200) g`,
    );
    // Full batches, so each batch's mark runs beside the next batch's poll and send.
    await startShard(temporal.client, taskQueue, { batchSize: 10 });
    // Sessions send, fail at their marks and are retried, again and again: the process must outlive all of it.
    const until = Date.now() + 30_000;
    while (Date.now() < until && worker.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 250));
    assert.equal(worker.child.exitCode, null, `the relay worker exited (code ${worker.child.exitCode}, signal ${worker.child.signalCode}):\n${worker.stderr.slice(-3000)}`);
    assert.equal(worker.child.signalCode, null);
    // What the window went through: batches sent, and not one of their marks let through.
    assert.ok((await readWholeTopic(topic.topic)).length >= 20, 'at least two batches sent while marks were refused');
    assert.equal(await unpublished(), 200, 'every mark refused');

    await db.pool.query('GRANT UPDATE (published_at) ON temporal_outbox.outbox_events TO outbox_relay, temporal_outbox_relay');
    await eventually('every row marked published', async () => (await unpublished()) === 0, 90_000);
    assert.equal(worker.child.exitCode, null, 'the same worker process marked them');
  });
});

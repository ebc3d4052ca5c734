import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { RawValue } from '@temporalio/common';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createInboxActivities } from '../../activities/inbox';
import { loadConfig } from '../../src/config/env';
import { InFlightBatches } from '../../src/inbox/batch-hand-off';
import { applyWorkflowRunner } from '../../src/inbox/consume-batch';
import { defineHandler, HandlerRegistry } from '../../src/inbox/handler';
import { APPLY_EVENTS_WORKFLOW, type ApplyEventsWorkflow, type EventBatch } from '../../workflows/inbox/contract';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';

// The batch the consumer started a workflow with reaches the workflow's activity in this process
// without being decoded again (src/inbox/batch-hand-off.ts), and only when the activity's input is
// byte for byte that batch: anything else is decoded from the input, as before.
describe('batch hand-off to the activity (real dev server, real PostgreSQL)', function () {
  this.timeout(120_000);
  const consumer = 'hand-off';
  const inFlight = new InFlightBatches();
  let seen: { eventId: string; data: unknown }[] = [];
  const probe = defineHandler<{ n: number }>({
    eventType: 'hand_off_probe',
    validate: (payload) => ({ ok: true, data: { n: Number(payload.n) } }),
    apply: async (_tx, event) => {
      seen.push({ eventId: event.eventId, data: event.data });
    },
  });
  let db: TestDatabase;
  let worker: Worker;
  let running: Promise<void>;
  let client: Client;
  let close: () => Promise<void>;
  const taskQueue = uniqueName('hand-off');

  const batchOf = (ids: string[]): EventBatch => ({
    consumer,
    topics: ['t'],
    eventIds: ids,
    eventTypes: ids.map(() => 'hand_off_probe'),
    topicIndex: ids.map(() => 0),
    partitions: ids.map(() => 0),
    offsets: ids.map((_, i) => String(i)),
    data: ids.map((_, i) => ({ n: i })),
    payloadHashes: ids.map((id) => `h-${id}`),
  });
  const appliedIds = async () => (await db.pool.query<{ event_id: string }>('SELECT event_id FROM temporal_outbox.inbox_processed_events WHERE consumer = $1 ORDER BY event_id', [consumer])).rows.map((r) => r.event_id);

  before(async () => {
    const config = loadConfig();
    db = await createTestDatabase();
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowsPath: require.resolve('../../workflows/inbox'),
      activities: createInboxActivities({ pool: db.pool, handlers: new HandlerRegistry([probe]), inFlight }),
    });
    running = worker.run();
    // One NativeConnection for worker and client, as in the consumer worker: eager start.
    client = new Client({ connection, namespace: config.temporal.namespace });
    close = async () => {
      worker.shutdown();
      await running;
      await connection.close();
    };
  });
  after(async () => {
    await close?.();
    await db?.drop();
  });
  beforeEach(() => {
    seen = [];
  });

  it('the batch this process started the workflow with is the one its handler gets: the same objects, not a decoded copy', async () => {
    const batch = batchOf(['a1', 'a2']);
    assert.deepEqual(await appliedIds(), []);
    const { result } = await applyWorkflowRunner(client, taskQueue, inFlight)(uniqueName('apply-held'), batch);
    assert.equal(result.applied, 2);
    assert.deepEqual(await appliedIds(), ['a1', 'a2']);
    assert.equal(seen.length, 2);
    seen.forEach((s, i) => assert.ok(s.data === batch.data[i], `event ${s.eventId}: the held object itself`));
    assert.equal(inFlight.size, 0, 'released once the workflow returned');
  });

  it('without the batch in hand (started elsewhere) the activity decodes its input and applies it the same', async () => {
    const batch = batchOf(['b1', 'b2']);
    const { result } = await applyWorkflowRunner(client, taskQueue)(uniqueName('apply-elsewhere'), batch);
    assert.equal(result.applied, 2);
    assert.deepEqual(seen.map((s) => s.data), batch.data, 'the same content');
    seen.forEach((s, i) => assert.ok(s.data !== batch.data[i], `event ${s.eventId}: decoded from the input`));
  });

  it('a batch held under the workflow id but not the one the workflow carries is not used: the input wins', async () => {
    const workflowId = uniqueName('apply-other');
    const held = batchOf(['c-held']);
    const carried = batchOf(['c-carried']);
    const release = inFlight.hold(workflowId, new RawValue(held).payload, held);
    try {
      const result = await client.workflow.execute<ApplyEventsWorkflow>(APPLY_EVENTS_WORKFLOW, { taskQueue, workflowId, args: [carried] });
      assert.equal(result.applied, 1);
    } finally {
      release();
    }
    const ids = await appliedIds();
    assert.ok(ids.includes('c-carried'), 'the workflow input was applied');
    assert.ok(!ids.includes('c-held'), 'the held batch was not');
    assert.deepEqual(seen.map((s) => s.eventId), ['c-carried']);
  });
});

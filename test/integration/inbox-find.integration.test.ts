import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { applyEvents } from '../../src/inbox/apply-events';
import { applySearchAttributes } from '../../src/inbox/apply-search-attributes';
import { findAppliedEvent } from '../../src/inbox/find-applied-event';
import { findEventWorkflows } from '../../src/inbox/find-event-workflows';
import { defineHandler, HandlerRegistry } from '../../src/inbox/handler';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { APPLY_EVENTS_WORKFLOW, type ApplyEventsWorkflow, type EventBatch } from '../../workflows/inbox/contract';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// `inbox find --event-id` starts from the inbox row: each consumer that applied the event, and
// where the event sat on Kafka when it did. The database holds the library's tables only (no
// example), so nothing but the inbox can say it.
describe('inbox find: from an event id to its Kafka position and its workflow runs', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  let temporal: { client: Client; connection: Connection };
  const topic = uniqueName('find-events');
  const handlers = new HandlerRegistry([
    defineHandler<{ refuse: boolean }>({
      eventType: 'noted',
      validate: (p) => ({ ok: true, data: { refuse: p.refuse === true } }),
      apply: async (_tx, e) => (e.data.refuse ? { rejected: 'refused by the test' } : undefined),
    }),
  ]);
  const batch = (consumer: string, events: { id: string; partition: number; offset: string; refuse?: boolean }[]): EventBatch => ({
    consumer,
    topics: [topic],
    eventIds: events.map((e) => e.id),
    eventTypes: events.map(() => 'noted'),
    topicIndex: events.map(() => 0),
    partitions: events.map((e) => e.partition),
    offsets: events.map((e) => e.offset),
    data: events.map((e) => ({ refuse: e.refuse === true })),
    payloadHashes: events.map((e) => `h-${e.id}`),
  });

  before(async () => {
    db = await createTestDatabase({ example: false });
    temporal = await testTemporalClient();
    await ensureSearchAttributes(temporal.connection, temporal.client.options.namespace);
  });
  after(async () => {
    await temporal?.connection.close();
    await db?.drop();
  });

  it("records each applied event's topic, partition and offset on its inbox row, per consumer, first delivery kept", async () => {
    await applyEvents(db.pool, handlers, batch('inbox-a', [
      { id: 'e-1', partition: 0, offset: '7' },
      { id: 'e-2', partition: 2, offset: '9007199254740991' },
      { id: 'e-3', partition: 1, offset: '8', refuse: true },
    ]));
    // A redelivery at another offset, and the same event applied by a second inbox.
    await applyEvents(db.pool, handlers, batch('inbox-a', [{ id: 'e-1', partition: 0, offset: '40' }]));
    await applyEvents(db.pool, handlers, batch('inbox-b', [{ id: 'e-1', partition: 1, offset: '3' }]));

    const e1 = await findAppliedEvent(db.pool, 'e-1');
    assert.deepEqual(e1.map(({ appliedAt: _, ...where }) => where), [
      { consumer: 'inbox-a', topic, partition: 0, offset: 7 },
      { consumer: 'inbox-b', topic, partition: 1, offset: 3 },
    ]);
    assert.ok(e1.every((r) => r.appliedAt instanceof Date && Date.now() - r.appliedAt.getTime() < 60_000));
    assert.deepEqual((await findAppliedEvent(db.pool, 'e-2')).map((r) => [r.partition, r.offset]), [[2, 9007199254740991]]);
    assert.deepEqual(await findAppliedEvent(db.pool, 'e-3'), [], 'a refused event has no inbox row');
  });

  it('lists the applyEventsWorkflow run that carried the event, from the position on its inbox row', async () => {
    const carried = batch('inbox-c', [
      { id: 'w-1', partition: 4, offset: '100' },
      { id: 'w-2', partition: 4, offset: '101' },
    ]);
    const decoy = batch('inbox-c', [{ id: 'w-other', partition: 4, offset: '100' }]);
    decoy.topics = [uniqueName('find-other')];
    // Runs as the consumer starts them (src/inbox/consume-batch.ts), on a queue no worker polls:
    // their input and search attributes are all `inbox find` reads.
    const queue = uniqueName('find-queue');
    const started = await Promise.all(
      [carried, decoy].map((b) =>
        temporal.client.workflow.start<ApplyEventsWorkflow>(APPLY_EVENTS_WORKFLOW, { taskQueue: queue, workflowId: uniqueName('apply-find'), typedSearchAttributes: applySearchAttributes(b), args: [b] }),
      ),
    );
    try {
      await applyEvents(db.pool, handlers, carried);
      let found: Awaited<ReturnType<typeof findEventWorkflows>> = [];
      await eventually('the run is visible to search', async () => {
        found = await findEventWorkflows(db.pool, temporal.client, 'w-2');
        return found.length === 1 && found[0]!.workflows.length > 0;
      }, 30_000, 500);
      const [f] = found;
      assert.deepEqual([f!.consumer, f!.topic, f!.partition, f!.offset], ['inbox-c', topic, 4, 101]);
      assert.deepEqual(f!.workflows, [{ workflowId: started[0]!.workflowId, runId: started[0]!.firstExecutionRunId, holdsEvent: true }]);
      assert.deepEqual(await findEventWorkflows(db.pool, temporal.client, 'w-other'), [], 'an event no inbox applied has no runs to find');
    } finally {
      await Promise.all(started.map((h) => h.terminate('test over').catch(() => undefined)));
    }
  });
});

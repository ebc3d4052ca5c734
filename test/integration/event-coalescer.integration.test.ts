import assert from 'node:assert/strict';
import { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, NativeConnection, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { createInboxActivities } from '../../activities/inbox';
import { loadConfig } from '../../src/config/env';
import { applyWorkflowRunner } from '../../src/inbox/consume-batch';
import { EventCoalescer, type ChunkEvents, type FlightReport } from '../../src/inbox/event-coalescer';
import { INBOX_FAILURES, type EventBatch } from '../../workflows/inbox/contract';
import { uniqueName } from '../kit/ids';
import { eventually } from '../kit/wait';

// The consumer's group commit (src/inbox/event-coalescer.ts) with the real applyEventsWorkflow on a
// real worker against the running dev server, in seconds: the activity is a stub this test
// registers (it records each batch and can be held), because the unit under test is how chunks
// of many partitions are gathered into workflows. The inbox's real-service tests are
// consumer-*.integration.test.ts.

type InboxActivities = ReturnType<typeof createInboxActivities>;

/** The activity the workflow runs, recording every batch; `hold()` makes the next ones wait until `release()`. */
class StubInbox {
  batches: EventBatch[] = [];
  private gate: Promise<void> | undefined;
  private open: (() => void) | undefined;
  hold() {
    this.gate = new Promise((r) => (this.open = r));
  }
  release() {
    this.open?.();
    this.gate = undefined;
  }
  activities(): InboxActivities {
    return {
      applyEvents: async (batch: EventBatch) => {
        this.batches.push(batch);
        await this.gate;
        if (batch.eventIds.some((id) => id.startsWith('bad-'))) {
          throw ApplicationFailure.create({ type: INBOX_FAILURES.invalidBatch, nonRetryable: true, message: 'stub: a bad batch' });
        }
        return { applied: batch.eventIds.length, duplicates: 0, rejected: 0, conflicts: 0 };
      },
      applyCredit: async () => {
        throw new Error('not used by the coalescer');
      },
    } as unknown as InboxActivities;
  }
}

let nextOffset = 0;
function chunk(topic: string, partition: number, events: number, idPrefix = 'ev', bytes = events * 100): ChunkEvents {
  const first = nextOffset;
  nextOffset += events;
  const offsets = Array.from({ length: events }, (_, i) => String(first + i));
  return {
    topic,
    partition,
    firstOffset: offsets[0]!,
    lastOffset: offsets.at(-1)!,
    eventIds: offsets.map((o) => `${idPrefix}-${partition}-${o}`),
    eventTypes: offsets.map(() => 'payment_confirmed'),
    offsets,
    data: offsets.map((o) => ({ accountId: '1', amount: Number(o) + 1 })),
    payloadHashes: offsets.map((o) => `hash-${o}`),
    traceparents: offsets.map(() => null),
    bytes,
  };
}

describe('event coalescer (real applyEventsWorkflow, stub activity, real dev server)', function () {
  this.timeout(60_000);
  // One NativeConnection for worker and client, as in the consumer worker: the workflow starts
  // eagerly (requestEagerStart), its first task handed straight to this process's worker.
  let workerConnection: NativeConnection;
  let client: Client;
  let bundle: WorkflowBundleWithSourceMap;

  before(async () => {
    const config = loadConfig();
    workerConnection = await NativeConnection.connect({ address: config.temporal.address });
    client = new Client({ connection: workerConnection, namespace: config.temporal.namespace });
    bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows/inbox'), logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} } });
  });
  after(async () => {
    await workerConnection?.close();
  });

  async function withCoalescer(inbox: StubInbox, opts: { maxEvents: number; maxBytes?: number; maxInFlight: number; windowMs?: number }, body: (c: EventCoalescer, flights: FlightReport[]) => Promise<void>) {
    const taskQueue = uniqueName('coalescer-tq');
    const worker = await Worker.create({ connection: workerConnection, taskQueue, workflowBundle: bundle, activities: inbox.activities(), shutdownGraceTime: '1 second' });
    const flights: FlightReport[] = [];
    const coalescer = new EventCoalescer(applyWorkflowRunner(client, taskQueue), { consumer: 'coalescer-test', group: uniqueName('g'), ...opts, onFlight: (r) => flights.push(r) });
    await worker.runUntil(body(coalescer, flights));
  }

  it('sends a chunk at once when nothing is in flight', async () => {
    const inbox = new StubInbox();
    await withCoalescer(inbox, { maxEvents: 100, maxInFlight: 3 }, async (coalescer) => {
      const report = await coalescer.submit(chunk('t', 0, 5));
      assert.equal(report.events, 5);
      assert.equal(report.chunks, 1);
      assert.equal(report.applied, 5, 'the workflow result comes back to the chunk');
      assert.equal(inbox.batches.length, 1);
    });
  });

  it('a flight stops at the byte bound: as many bytes waiting as one flight takes leave beside the running one, the rest after', async () => {
    const inbox = new StubInbox();
    await withCoalescer(inbox, { maxEvents: 100, maxBytes: 1000, maxInFlight: 3 }, async (coalescer) => {
      inbox.hold();
      const first = coalescer.submit(chunk('t', 0, 2, 'bb', 100));
      await eventually('the first flight running', async () => inbox.batches.length === 1, 20_000, 20);
      const later = [1, 2, 3].map((p) => coalescer.submit(chunk('t', p, 3, 'bb', 400)));
      await eventually('a second flight for the full 1,000 bytes', async () => inbox.batches.length === 2, 20_000, 20);
      assert.equal(inbox.batches[1]!.eventIds.length, 6, 'two chunks of 400 bytes; a third would pass 1,000');
      inbox.release();
      await Promise.all([first, ...later]);
      assert.deepEqual(inbox.batches.map((b) => b.eventIds.length), [2, 6, 3]);
    });
  });

  it('gathers the chunks of every partition that arrive during a flight into the next single workflow', async () => {
    const inbox = new StubInbox();
    await withCoalescer(inbox, { maxEvents: 100, maxInFlight: 3 }, async (coalescer, flights) => {
      inbox.hold();
      const first = coalescer.submit(chunk('t', 0, 2));
      await eventually('the first flight running', async () => inbox.batches.length === 1, 20_000, 20);
      const later = [coalescer.submit(chunk('t', 1, 3)), coalescer.submit(chunk('t', 2, 4)), coalescer.submit(chunk('u', 0, 1))];
      assert.equal(inbox.batches.length, 1, 'nothing else leaves while one flight is in the air and no full batch waits');
      inbox.release();
      await first;
      const reports = await Promise.all(later);
      assert.equal(new Set(reports.map((r) => r.workflowId)).size, 1, 'one workflow for the three chunks');
      assert.deepEqual(reports[0]!.partitions, ['t/1', 't/2', 'u/0']);
      assert.equal(inbox.batches.length, 2);
      const gathered = inbox.batches[1]!;
      assert.equal(gathered.eventIds.length, 8);
      assert.deepEqual(gathered.topics, ['t', 'u']);
      assert.deepEqual(gathered.partitions, [1, 1, 1, 2, 2, 2, 2, 0]);
      assert.deepEqual(gathered.topicIndex, [0, 0, 0, 0, 0, 0, 0, 1]);
      assert.equal(flights.length, 2);
    });
  });

  it('with a coalescing window, the chunks of one fetch leave together in one workflow instead of the first alone', async () => {
    // kafkajs hands out every partition's batch of a fetch at once: three chunks within a tick.
    const submitFetch = (c: EventCoalescer, tag: string) => Promise.all([0, 1, 2].map((p) => c.submit(chunk('t', p, 2, tag))));
    const withoutWindow = new StubInbox();
    await withCoalescer(withoutWindow, { maxEvents: 100, maxInFlight: 3 }, async (coalescer) => {
      await submitFetch(coalescer, 'nw');
    });
    assert.deepEqual(withoutWindow.batches.map((b) => b.eventIds.length), [2, 4], 'without a window the first chunk flies alone and the others take a second workflow');
    const withWindow = new StubInbox();
    await withCoalescer(withWindow, { maxEvents: 100, maxInFlight: 3, windowMs: 5 }, async (coalescer, flights) => {
      const reports = await submitFetch(coalescer, 'w');
      assert.equal(new Set(reports.map((r) => r.workflowId)).size, 1, 'one workflow for the three chunks');
      assert.deepEqual(flights[0]!.spans.map((s) => s.partition), [0, 1, 2], "the flight's log line names each chunk");
    });
    assert.deepEqual(withWindow.batches.map((b) => b.eventIds.length), [6]);
  });

  it('a full batch does not wait for the window', async () => {
    const inbox = new StubInbox();
    await withCoalescer(inbox, { maxEvents: 4, maxInFlight: 3, windowMs: 60_000 }, async (coalescer) => {
      const report = await coalescer.submit(chunk('t', 0, 4));
      assert.equal(report.events, 4, 'left at once although the window is a minute');
    });
  });

  it('caps a flight at maxEvents and flies a full batch beside a running one, up to maxInFlight', async () => {
    const inbox = new StubInbox();
    await withCoalescer(inbox, { maxEvents: 10, maxInFlight: 2 }, async (coalescer) => {
      inbox.hold();
      const all = [coalescer.submit(chunk('t', 0, 4))];
      await eventually('the first flight running', async () => inbox.batches.length === 1, 20_000, 20);
      for (let p = 1; p <= 6; p++) all.push(coalescer.submit(chunk('t', p, 4)));
      // 24 events wait: a full batch (10) may fly beside the running one, but no third flight.
      await eventually('a second flight beside the first', async () => inbox.batches.length === 2, 20_000, 20);
      assert.equal(inbox.batches[1]!.eventIds.length, 8, 'two chunks of 4: a third would pass maxEvents');
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(inbox.batches.length, 2, 'maxInFlight is 2');
      inbox.release();
      await Promise.all(all);
      assert.ok(inbox.batches.every((b) => b.eventIds.length <= 10));
      assert.equal(inbox.batches.reduce((n, b) => n + b.eventIds.length, 0), 28, 'every event applied once');
    });
  });

  it('fails every chunk of a failed flight and keeps serving the next ones', async () => {
    const inbox = new StubInbox();
    await withCoalescer(inbox, { maxEvents: 100, maxInFlight: 1 }, async (coalescer) => {
      inbox.hold();
      const first = coalescer.submit(chunk('t', 0, 1));
      await eventually('the first flight running', async () => inbox.batches.length === 1, 20_000, 20);
      const doomed = [coalescer.submit(chunk('t', 1, 2, 'bad')), coalescer.submit(chunk('t', 2, 2))];
      inbox.release();
      await first;
      for (const d of doomed) await assert.rejects(d, 'both chunks of the failed workflow are rejected (their offsets stay uncommitted)');
      const after = await coalescer.submit(chunk('t', 3, 2));
      assert.equal(after.applied, 2);
    });
  });
});

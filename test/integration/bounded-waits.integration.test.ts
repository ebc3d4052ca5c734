import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { WorkflowFailedError } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createInboxActivities } from '../../activities/inbox';
import { loadConfig } from '../../src/config/env';
import { createPool, databaseTimeouts } from '../../src/db/pool';
import { defineHandler, HandlerRegistry } from '../../src/inbox/handler';
import { connectTemporalClient, withCallDeadline } from '../../src/temporal/connect-client';
import { APPLY_EVENTS_WORKFLOW, type ApplyEventsWorkflow, type EventBatch } from '../../workflows/inbox/contract';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';

const oneEvent: EventBatch = { consumer: 'nobody', topics: ['t'], eventIds: ['e1'], eventTypes: ['payment_confirmed'], topicIndex: [0], partitions: [0], offsets: ['0'], data: [{}], payloadHashes: ['h'] };

// Nothing waits without end: pools carry a statement and a lock timeout, Temporal calls a
// deadline, and a programming error fails its workflow at once instead of being retried for ever.
describe('bounded waits', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => db?.drop());

  it('every pool has a statement and a lock timeout: the defaults, or the configured ones', async () => {
    const show = async (pool: ReturnType<typeof createPool>) => {
      const { rows } = await pool.query(`SELECT current_setting('statement_timeout') AS statement, current_setting('lock_timeout') AS lock`);
      return rows[0];
    };
    const plain = createPool(db.url, { max: 1 });
    const configured = createPool(db.url, { max: 1, ...databaseTimeouts(loadConfig({ ...process.env, DATABASE_STATEMENT_TIMEOUT_MS: '45000', DATABASE_LOCK_TIMEOUT_MS: '2500' })) });
    try {
      assert.deepEqual(await show(plain), { statement: '30s', lock: '10s' });
      assert.deepEqual(await show(configured), { statement: '45s', lock: '2500ms' });
    } finally {
      await plain.end();
      await configured.end();
    }
  });

  it('a statement waiting on a lock longer than the lock timeout fails with 55P03 instead of waiting', async () => {
    await db.pool.query('CREATE TABLE lock_probe (id int PRIMARY KEY)');
    const holder = await db.pool.connect();
    const waiter = createPool(db.url, { max: 1, lock_timeout: 500 });
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE lock_probe IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      await assert.rejects(waiter.query('SELECT * FROM lock_probe'), (err: { code?: string }) => err.code === '55P03');
      const waited = Date.now() - started;
      assert.ok(waited >= 400 && waited < 5000, `gave up after the lock timeout (${waited} ms)`);
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
      await waiter.end();
    }
  });

  it('a Temporal call nobody answers ends at its deadline (a workflow on a task queue no worker polls)', async () => {
    const config = loadConfig({ ...process.env, TEMPORAL_CALL_TIMEOUT_MS: '3000' });
    const { connection, client } = await connectTemporalClient(config);
    try {
      const started = Date.now();
      const outcome = await withCallDeadline(connection, config, () =>
        client.workflow.execute<ApplyEventsWorkflow>(APPLY_EVENTS_WORKFLOW, { taskQueue: uniqueName('nobody-polls'), workflowId: uniqueName('deadline'), args: [oneEvent] }),
      ).then(
        () => assert.fail('a workflow nobody runs returned a result'),
        (err: Error & { cause?: { code?: number; message?: string } }) => err,
      );
      const waited = Date.now() - started;
      // The deadline ends the history long poll either on this side (DEADLINE_EXCEEDED) or on the
      // server, which drops its side of a poll whose caller is out of time and answers CANCELLED;
      // both are the bounded wait this test is about.
      const code = outcome.cause?.code;
      const endedByDeadline = code === 4 /* DEADLINE_EXCEEDED */ || code === 1 /* CANCELLED */ || /deadline/i.test(`${outcome.message} ${outcome.cause?.message}`);
      assert.ok(endedByDeadline, `ended by its deadline, not by: ${inspect(outcome)} (cause: ${inspect(outcome.cause)})`);
      assert.ok(waited >= 2_500 && waited < 15_000, `ended at its 3 s deadline (after ${waited} ms)`);
    } finally {
      await connection.close();
    }
  });

  it('a handler bug (TypeError) fails its applyEventsWorkflow on the first attempt, visibly, instead of retrying for ever', async () => {
    const config = loadConfig();
    const buggy = defineHandler<{ n: number }>({
      eventType: 'buggy_event',
      validate: () => ({ ok: true, data: { n: 1 } }),
      apply: async () => {
        const missing = undefined as unknown as { call(): void };
        missing.call(); // TypeError: Cannot read properties of undefined
      },
    });
    const taskQueue = uniqueName('programming-error');
    const connection = await NativeConnection.connect({ address: config.temporal.address });
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowsPath: require.resolve('../../workflows/inbox'),
      activities: createInboxActivities({ pool: db.pool, handlers: new HandlerRegistry([buggy]) }),
    });
    const { client, connection: clientConnection } = await connectTemporalClient(config);
    const batch: EventBatch = { consumer: 'bug', topics: ['t'], eventIds: ['e1'], eventTypes: ['buggy_event'], topicIndex: [0], partitions: [0], offsets: ['0'], data: [{ n: 1 }], payloadHashes: ['h'] };
    try {
      const failure = await worker.runUntil(
        client.workflow.execute<ApplyEventsWorkflow>(APPLY_EVENTS_WORKFLOW, { taskQueue, workflowId: uniqueName('buggy'), args: [batch], workflowExecutionTimeout: '60 seconds' }).then(
          () => undefined,
          (err: unknown) => err,
        ),
      );
      assert.ok(failure instanceof WorkflowFailedError, `the workflow failed (got ${String(failure)})`);
      // Retried for ever, it would have run into the 60 s execution timeout (a TimeoutFailure) instead.
      const cause = failure.cause as { type?: string; message?: string } | undefined;
      assert.equal(cause?.type, 'TypeError');
      assert.match(String(cause?.message), /Cannot read properties of undefined/);
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events WHERE consumer = 'bug'`);
      assert.equal(rows[0].n, 0, 'rolled back: nothing recorded as applied');
    } finally {
      await clientConnection.close();
      await connection.close();
    }
  });
});

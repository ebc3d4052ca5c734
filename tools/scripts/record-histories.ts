// Records workflow histories from real runs of the current code, into test/histories/v<version>/,
// for the replay test (test/unit/workflow-replay.unit.test.ts). One command, against the running
// stack (`npm run stack:up` first); every run uses a scratch database, topic, task queue and
// workflow ids of its own, so it never touches the pipeline's data:
//   npm run histories:record [-- --release v0.2.0]
// (--release: the folder to write, `v<package.json version>` unless given). Re-run it at each release (after bumping the version: a new folder beside the older ones) and
// whenever a workflow gains a path the recorded runs do not take. docs/upgrading.md says when.
import '../../test/kit/quiet-runtime';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createInboxActivities } from '../../activities/inbox';
import { createRetentionActivities } from '../../activities/retention';
import { loadStackConfig } from '../local-stack/stack-config';
import { applyWorkflowRunner } from '../../src/inbox/consume-batch';
import { HandlerRegistry } from '../../src/inbox/handler';
import { payloadHash } from '../../src/inbox/payload-hash';
import { paymentConfirmedHandler } from '../../examples/payments/credit-handler';
import type { EventBatch } from '../../workflows/inbox/contract';
import { RELAY_SHARD_WORKFLOW, RELAY_WORKFLOW_TASK_TIMEOUT, statusQuery, stopSignal, type RelayShardInput, type RelayShardWorkflow } from '../../workflows/relay/contract';
import { RETENTION_WORKFLOW, type RetentionReport, type RetentionWorkflow } from '../../workflows/retention/contract';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';
import { uniqueName } from '../../test/kit/ids';
import { testKafka } from '../../test/kit/kafka';
import { relayTestConfig, startInProcessRelay, startShard } from '../../test/kit/relay-harness';
import { testTemporalClient } from '../../test/kit/temporal';
import { eventually } from '../../test/kit/wait';
import { currentRelease, writeRecordedHistory, type History } from '../../test/kit/workflow-histories';
import { temporalConnectionOptions } from '../../src/temporal/connection-options';

const say = (m: string) => console.log(`[histories] ${m}`);

/** Every run of a workflow id, first to last, following its continue-as-new chain. */
async function historiesOfChain(client: Client, workflowId: string, firstRunId: string): Promise<History[]> {
  const out: History[] = [];
  for (let runId: string | undefined = firstRunId; runId; ) {
    const history: History = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    out.push(history);
    runId = history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return out;
}

async function outboxCounts(db: TestDatabase): Promise<{ pending: number; parked: number }> {
  const { rows } = await db.pool.query<{ pending: number; parked: number }>(
    `SELECT count(*) FILTER (WHERE published_at IS NULL AND parked_at IS NULL)::int AS pending,
            count(*) FILTER (WHERE parked_at IS NOT NULL)::int AS parked
       FROM temporal_outbox.outbox_events`,
  );
  return rows[0]!;
}

/** Plain-SQL producer rows (the public contract): `payment_confirmed` with only type and payload. */
async function insertEvents(db: TestDatabase, prefix: string, count: number, padding = 0): Promise<void> {
  await db.pool.query(
    `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
     SELECT 'payment_confirmed',
            jsonb_build_object('event_id', $1::text || g, 'type', 'payment_confirmed', 'account_id', 1000 + g % 4, 'amount', 100 + g, 'note', repeat('x', $3::int))
       FROM generate_series(1, $2::int) g`,
    [prefix, count, padding],
  );
}

/**
 * One relay shard through every path of one of its loops: in local mode (batches as local
 * activities) full batches, continue-as-new by batches, a short batch; in session mode (the
 * default: sessions on the placed worker's queue) placement, sessions, continue-as-new by
 * sessions. Both: idle waits woken by NOTIFY, a row the broker refuses (backing off with a timer,
 * then parked), and the stop signal while idle.
 */
async function recordRelay(client: Client, mode: 'local' | 'session'): Promise<{ name: string; history: History }[]> {
  const db = await createTestDatabase();
  const topic = uniqueName('histories-relay');
  const admin = testKafka().admin();
  await admin.connect();
  // The broker refuses messages over 2,000 bytes while the relay's own check allows 1 MB: a
  // refusal the relay pins on the row, retries after a back-off, then parks (RELAY_MAX_ATTEMPTS 2).
  await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: '2000' }] }], waitForLeaders: true });
  const relay = await startInProcessRelay(relayTestConfig(db.url, topic, { RELAY_MAX_ATTEMPTS: '2' }));
  try {
    await insertEvents(db, 'hist-a-', 25);
    const handle =
      mode === 'local'
        ? await startShard(client, relay.taskQueue, { batchSize: 10, maxBatchesPerRun: 2, idleWaitMs: 3000, activityMode: 'local' }, uniqueName('histories-relay-shard-0'))
        : await startSessionShard(client, relay.taskQueue, uniqueName('histories-relay-session-shard-0'));
    await eventually('the first 25 rows published', async () => (await outboxCounts(db)).pending === 0, 60_000);
    await new Promise((r) => setTimeout(r, 4000)); // at least one idle wait that times out
    await insertEvents(db, 'hist-b-', 5);
    await eventually('5 more rows published after a NOTIFY', async () => (await outboxCounts(db)).pending === 0, 60_000);
    await insertEvents(db, 'hist-c-', 1, 3000);
    await eventually('the refused row parked after its back-off', async () => (await outboxCounts(db)).parked === 1, 60_000);
    // Stopped while idle, so the signal cancels the idle wait (a path of its own in history).
    await eventually('the shard idle again', async () => (await handle.query(statusQuery)).state === 'idle', 60_000);
    // By name, as src/outbox/relay-control.ts does: workflow modules only load inside a workflow context.
    await handle.signal(stopSignal);
    const counters = await handle.result();
    say(`relay shard: ${JSON.stringify(counters)}`);
    const runs = await historiesOfChain(client, handle.workflowId, handle.firstExecutionRunId);
    if (runs.length < 2) throw new Error(`expected the shard to continue as new at least once, it ran ${runs.length} run(s)`);
    const prefix = mode === 'local' ? 'relay-shard-run' : 'relay-session-shard-run';
    return runs.map((history, i) => ({ name: `${prefix}-${i + 1}${i < runs.length - 1 ? '-continued-as-new' : '-stopped'}`, history }));
  } finally {
    await relay.close();
    await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
    await admin.disconnect();
    await db.drop();
  }
}

/**
 * A session-mode shard with small budgets, so that the recording takes every path in seconds:
 * sessions of at most 2 s that hand back a drained shard after 0.5 s, continue-as-new after
 * 2 sessions. Started directly: the test kit's startShard has no session settings.
 */
function startSessionShard(client: Client, taskQueue: string, workflowId: string) {
  const input: RelayShardInput = { shardIndex: 0, shardCount: 1, batchSize: 10, idleWaitMs: 3000, activityMode: 'session', sessionMs: 2000, drainGraceMs: 500, maxSessionsPerRun: 2 };
  return client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, { taskQueue, workflowId, workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT, args: [input] });
}

/** The consumer's workflows: a batch with a repeat and an unknown account, and the per-event one. */
async function recordCredit(): Promise<{ name: string; history: History }[]> {
  const config = loadStackConfig();
  const db = await createTestDatabase();
  const taskQueue = uniqueName('histories-credit');
  await db.pool.query('INSERT INTO accounts (account_id) VALUES (1001), (1002)');
  const credit = paymentConfirmedHandler({ maxCreditAmount: 100_000_000_000 });
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  try {
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowsPath: require.resolve('../../workflows/inbox'),
      activities: createInboxActivities({ pool: db.pool, handlers: new HandlerRegistry([credit]) }),
    });
    // As the consumer worker does: the client shares the worker's connection (eager start).
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const batchId = uniqueName('histories-credits');
    const events = [
      { eventId: 'e1', accountId: 1001, amount: 100, offset: '0', partition: 0 },
      { eventId: 'e2', accountId: 1002, amount: 250, offset: '0', partition: 1 },
      { eventId: 'e1', accountId: 1001, amount: 100, offset: '1', partition: 0 },
      { eventId: 'e3', accountId: 9999, amount: 5, offset: '1', partition: 1 },
    ];
    const payloads = events.map((e) => ({ event_id: e.eventId, type: credit.eventType, account_id: e.accountId, amount: e.amount }));
    const batch: EventBatch = {
      consumer: 'histories',
      topics: ['histories.events'],
      eventIds: events.map((e) => e.eventId),
      eventTypes: events.map(() => credit.eventType),
      topicIndex: events.map(() => 0),
      partitions: events.map((e) => e.partition),
      offsets: events.map((e) => e.offset),
      data: payloads.map((p) => {
        const validated = credit.validate(p);
        if (!validated.ok) throw new Error(`recording batch event ${p.event_id} is invalid: ${validated.reason}`);
        return validated.data;
      }),
      payloadHashes: payloads.map((p) => payloadHash(p)),
    };
    await worker.runUntil(async () => {
      const result = await applyWorkflowRunner(client, taskQueue)(batchId, batch);
      say(`event batch: ${JSON.stringify(result)}`);
    });
    return [
      { name: 'credit-batch', history: await client.workflow.getHandle(batchId).fetchHistory() },
    ];
  } finally {
    await connection.close();
    await db.drop();
  }
}

/** One retention run over old published rows, pending rows and old inbox ids. */
async function recordRetention(client: Client): Promise<{ name: string; history: History }[]> {
  const config = loadStackConfig();
  const db = await createTestDatabase();
  const taskQueue = uniqueName('histories-retention');
  await db.pool.query(
    `INSERT INTO temporal_outbox.outbox_events (event_type, payload, created_at, published_at)
     SELECT 'payment_confirmed', jsonb_build_object('event_id', 'old-' || g, 'type', 'payment_confirmed', 'account_id', 1001, 'amount', 1),
            now() - interval '3 days', CASE WHEN g % 10 = 0 THEN NULL ELSE now() - interval '3 days' END
       FROM generate_series(1, 250) g`,
  );
  await db.pool.query(`INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id, processed_at) SELECT 'payments-credit', 'old-' || g, now() - interval '20 days' FROM generate_series(1, 50) g`);
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  try {
    const worker = await Worker.create({
      connection,
      namespace: config.temporal.namespace,
      taskQueue,
      workflowsPath: require.resolve('../../workflows/retention/retention'),
      activities: createRetentionActivities({ pool: db.pool, config }),
    });
    const workflowId = uniqueName('histories-retention-run');
    const report = (await worker.runUntil(
      client.workflow.execute<RetentionWorkflow>(RETENTION_WORKFLOW, { taskQueue, workflowId, args: [{ windowMs: 86_400_000, batchSize: 100, batchPauseMs: 0, timeBudgetMs: 60_000, inboxHorizonMs: 15 * 86_400_000 }] }),
    )) as RetentionReport;
    say(`retention: outbox deleted ${report.outbox.deleted} in ${report.outbox.batches} batches, inbox deleted ${report.inbox.deleted}`);
    return [{ name: 'retention-run', history: await client.workflow.getHandle(workflowId).fetchHistory() }];
  } finally {
    await connection.close();
    await db.drop();
  }
}

async function main() {
  const at = process.argv.indexOf('--release');
  const release = at >= 0 ? process.argv[at + 1] : currentRelease();
  if (!release || !/^v\d+\.\d+\.\d+$/.test(release)) throw new Error(`--release must name a folder like v0.2.0 (got ${JSON.stringify(release)})`);
  const { client, connection } = await testTemporalClient();
  try {
    const recorded = [...(await recordRelay(client, 'local')), ...(await recordRelay(client, 'session')), ...(await recordCredit()), ...(await recordRetention(client))];
    for (const { name, history } of recorded) {
      const file = writeRecordedHistory(release, name, history);
      say(`${file}: ${history.events?.length ?? 0} events`);
    }
  } finally {
    await connection.close();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);

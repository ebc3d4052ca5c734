import assert from 'node:assert/strict';
import { consumerEnv, eventsWithDuplicates, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// kill -9 of a consumer worker while it is crediting, then a restart: every balance exact, and
// no apply workflow left running (a workflow whose task the killed worker held times out and is
// finished by the restarted one; its local activity runs again and the inbox makes it a no-op).
describe('consumer: kill -9 mid-batch, restart, balances exact', () => {
  let db: TestDatabase;
  let temporal: Awaited<ReturnType<typeof testTemporalClient>>;
  let topic: { topic: string; remove(): Promise<void> };
  const processes: ConsumerProcess[] = [];
  const accounts = 50;
  const { events, expected } = eventsWithDuplicates('crash', 20_000, 2_000, accounts);
  const group = uniqueName('crash-group');
  const taskQueue = uniqueName('crash-queue');
  // Small chunks: many workflows in flight, so the kill lands in the middle of crediting.
  const env = () => consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue, extra: { CONSUMER_BATCH_SIZE: '100' } });

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [accounts]);
  });
  after(async () => {
    for (const p of processes) await p.stop('SIGKILL');
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const inboxCount = async () => (await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events')).rows[0].n as number;

  it('loses nothing and credits nothing twice', async () => {
    const applyWorkflows = async (status?: 'Running') =>
      (await temporal.client.workflow.count(`TaskQueue = '${taskQueue}'${status ? ` AND ExecutionStatus = '${status}'` : ''}`)).count;
    const kafka = testKafka();
    await produceEvents(kafka, topic.topic, events);

    const first = spawnConsumer(env());
    processes.push(first);
    await waitUntilRunning(first);
    await eventually('crediting to be under way', async () => (await inboxCount()) >= 2_000, 90_000, 50);
    first.proc.kill('SIGKILL');
    const { signal } = await first.exited;
    assert.equal(signal, 'SIGKILL');
    const atKill = await inboxCount();
    assert.ok(atKill < 20_000, `the kill must land mid-run (credited ${atKill} of 20,000 before it)`);
    // Usually one or more (flights follow each other closely); the check at the end needs none.
    const runningAtKill = await applyWorkflows('Running');

    const second = spawnConsumer(env());
    processes.push(second);
    await waitUntilRunning(second);
    await eventually('the restarted worker to consume everything', () => groupCaughtUp(kafka, group, topic.topic), 120_000);

    const { rows } = await db.pool.query<{ account_id: string; balance: string }>('SELECT account_id, balance FROM accounts ORDER BY account_id');
    for (const row of rows) assert.equal(Number(row.balance), expected.get(Number(row.account_id)), `account ${row.account_id}`);
    assert.equal(await inboxCount(), 20_000);

    assert.ok((await applyWorkflows()) > 0, 'the run left apply workflows to look at');
    await eventually(`every apply workflow closed (${runningAtKill} were running at the kill)`, async () => (await applyWorkflows('Running')) === 0, 90_000, 500);
  });
});

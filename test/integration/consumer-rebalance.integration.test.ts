import assert from 'node:assert/strict';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { assignedPartitions, creditedAfter } from '../kit/consumer-log-reads';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { CreditStream } from '../kit/credit-stream';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// Scaling by adding workers: processes of one group split the partitions; a third one joining
// mid-stream triggers a rebalance, and no event is credited twice across the handover.
describe('consumer: workers share partitions; adding a third rebalances with no double credit', () => {
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  const processes: ConsumerProcess[] = [];
  const accounts = 60;
  const partitions = 6;
  const group = uniqueName('scale-group');
  const taskQueue = uniqueName('scale-queue');
  let stream: CreditStream | undefined;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(partitions);
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [accounts]);
  });
  after(async () => {
    await stream?.stop();
    for (const p of processes) await p.stop('SIGKILL');
    await topic?.remove();
    await db?.drop();
  });

  const start = () => {
    const p = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue, partitions, extra: { CONSUMER_BATCH_SIZE: '200' } }));
    processes.push(p);
    return p;
  };
  /** The partitions a process was given at its most recent join. */
  const latestAssignment = (p: ConsumerProcess) => assignedPartitions(p, topic.topic);


  it('two workers split six partitions, a third takes its share, balances stay exact', async () => {
    const a = start();
    const b = start();
    await Promise.all([waitUntilRunning(a), waitUntilRunning(b)]);
    stream = new CreditStream(topic.topic, 'scale', accounts);

    await eventually('A and B to split the partitions between them', async () => {
      const [pa, pb] = [latestAssignment(a), latestAssignment(b)];
      return pa.length > 0 && pb.length > 0 && pa.length + pb.length === partitions && pa.every((x) => !pb.includes(x));
    });
    const splitAt = Date.now();
    await eventually('both A and B to credit their partitions', async () => creditedAfter(a, splitAt) && creditedAfter(b, splitAt));

    const c = start();
    await waitUntilRunning(c);
    await eventually('the group to rebalance over three workers', async () => {
      const all = [a, b, c].map(latestAssignment);
      return all.every((x) => x.length === 2) && new Set(all.flat()).size === partitions;
    });
    const rebalancedAt = Date.now();
    await eventually('all three to credit after the rebalance', async () => [a, b, c].every((p) => creditedAfter(p, rebalancedAt)));

    await stream.stop();
    await eventually('the group to consume everything', () => groupCaughtUp(testKafka(), group, topic.topic));

    const { rows } = await db.pool.query<{ account_id: string; balance: string }>('SELECT account_id, balance FROM accounts ORDER BY account_id');
    for (const row of rows) assert.equal(Number(row.balance), stream.expected.get(Number(row.account_id)) ?? 0, `account ${row.account_id}`);
    const inbox = await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events');
    assert.equal(inbox.rows[0].n, stream.unique);
    assert.ok(stream.unique > 1_000, `a real stream went through (${stream.unique} unique events)`);
  });
});

import assert from 'node:assert/strict';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { assignedPartitions, creditedAfter, joinedAfter } from '../kit/consumer-log-reads';
import { componentDatabaseUrl, createTestDatabase, type TestDatabase } from '../kit/database';
import { startFaultProxy, type FaultProxy } from '../kit/fault-proxy';
import { CreditStream } from '../kit/credit-stream';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// A consumer whose PostgreSQL link goes silent (black hole) while events flow: it must leave the
// group so the other consumer takes its partitions within 60 s of the fault, come back by itself
// within 30 s of a heal that leaves its old connections dead, and every balance must end exact
// (lost 0, double-applied 0). Consumer A reaches PostgreSQL through the fault proxy, B directly.
const TAKEOVER_BOUND_MS = 60_000;
const REJOIN_BOUND_MS = 30_000;

describe('consumer with a black-holed PostgreSQL link', function () {
  this.timeout(900_000);
  let db: TestDatabase;
  let proxy: FaultProxy;
  let topic: { topic: string; remove(): Promise<void> };
  const processes: ConsumerProcess[] = [];
  const accounts = 60;
  const partitions = 6;
  let stream: CreditStream | undefined;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(partitions);
    proxy = await startFaultProxy();
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [accounts]);
  });
  after(async () => {
    await stream?.stop();
    for (const p of processes) await p.stop('SIGKILL');
    await proxy?.close();
    await topic?.remove();
    await db?.drop();
  });

  const assignment = (p: ConsumerProcess) => assignedPartitions(p, topic.topic);


  it('B takes A\'s partitions within 60 s of the fault, A rejoins within 30 s of the heal, balances exact', async () => {
    const link = await proxy.link(uniqueName('consumer-a-pg'), { host: '127.0.0.1', port: loadStackConfig().local.pgPort });
    const group = uniqueName('gray-group');
    const taskQueue = uniqueName('gray-consumer-tq');
    const env = consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue, partitions, extra: { CONSUMER_BATCH_SIZE: '200' } });
    const throughProxy = new URL(componentDatabaseUrl({ DATABASE_URL: db.url }, 'consumer')!);
    throughProxy.host = link.address;
    const a = spawnConsumer({ ...env, CONSUMER_DATABASE_URL: throughProxy.toString() });
    const b = spawnConsumer(env);
    processes.push(a, b);
    await Promise.all([waitUntilRunning(a), waitUntilRunning(b)]);
    stream = new CreditStream(topic.topic, 'gray', accounts);
    try {
      await eventually('A and B to split the partitions and credit', async () => assignment(a).length > 0 && assignment(b).length > 0 && creditedAfter(a, 0) && creditedAfter(b, 0), 120_000, 250);

      await link.blackHole();
      const fault = Date.now();
      await eventually('B to hold every partition and credit after the fault', async () => assignment(b).length === partitions && creditedAfter(b, fault) && joinedAfter(b, fault), TAKEOVER_BOUND_MS, 250).catch((err: Error) => {
        const tail = (p: ConsumerProcess) => p.logs.filter((l) => (l.time as number) >= fault && l.msg !== 'batch applied').map((l) => `${String(l.msg)} ${JSON.stringify(l.err ?? l.reason ?? l.assignment ?? '')}`).slice(0, 40).join('\n');
        throw new Error(`${err.message}\nB assignment ${JSON.stringify(assignment(b))}, B credited after fault ${creditedAfter(b, fault)}\nA:\n${tail(a)}\nB:\n${tail(b)}\nA stderr: ${a.stderr.join('').slice(-1500)}`);
      });
      const takeover = Date.now() - fault;
      assert.ok(a.logs.some((l) => l.msg === 'a link failed its health check: stepping aside until it answers again'), 'A stepped aside');

      await link.heal({ oldConnections: 'dead' });
      const heal = Date.now();
      await eventually('A to rejoin and be given partitions', async () => joinedAfter(a, heal) && assignment(a).length > 0, REJOIN_BOUND_MS, 250);
      const rejoin = Date.now() - heal;
      await eventually('A to credit again', async () => creditedAfter(a, heal), 60_000, 250);

      await stream.stop();
      await eventually('the group to consume everything', () => groupCaughtUp(testKafka(), group, topic.topic), 120_000, 500);
      const { rows } = await db.pool.query<{ account_id: string; balance: string }>('SELECT account_id, balance FROM accounts ORDER BY account_id');
      for (const row of rows) assert.equal(Number(row.balance), stream.expected.get(Number(row.account_id)) ?? 0, `account ${row.account_id}: lost 0, double-applied 0`);
      const inbox = await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events');
      assert.equal(inbox.rows[0].n, stream.unique);
      process.stdout.write(`      consumer PostgreSQL black hole: takeover ${takeover} ms after the fault, A rejoined ${rejoin} ms after the heal; ${stream.unique} unique events, balances exact\n`);
    } finally {
      await stream.stop();
    }
  });
});

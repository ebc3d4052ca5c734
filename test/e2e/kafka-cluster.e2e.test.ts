import assert from 'node:assert/strict';
import path from 'node:path';
import { startChildWorker, stopChildWorkers, type ChildWorker } from '../../tools/local-stack/child-processes';
import { waitForPollers } from '../../tools/local-stack/wait-for-workers';
import { createPool } from '../../src/db/pool';
import { clusterNodePid } from '../../tools/local-stack/kafka-cluster';
import { cachePaths } from '../../tools/local-stack/paths';
import { tailOf } from '../../tools/local-stack/processes';
import { stackDown, stackUp } from '../../tools/local-stack/stack';
import { createKafka } from '../../src/kafka/client';
import { ensureTopics } from '../../src/kafka/topics';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { childEnv, isolatedStack, type IsolatedStack } from '../kit/isolated-stack';
import { startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { compiledScript } from '../kit/compiled-build';

// Kafka as a cluster (LOCAL_KAFKA_BROKERS=3): three KRaft nodes of a scratch cache folder on
// ports of their own, the project's topics replicated 3 times with min.insync.replicas=2. While
// events flow, the leader of a partition is killed with kill -9; the relay and the consumer,
// never restarted, carry on with the two nodes left, and every committed event is published and
// credited exactly once. PostgreSQL and Temporal are the shared stack's (own database, task
// queues, workflow ids).
describe('Kafka as a 3-node KRaft cluster: kill -9 of a partition leader while events flow', function () {
  this.timeout(600_000);
  const ACCOUNTS = Array.from({ length: 8 }, (_, i) => 700 + i);
  const say = (m: string) => process.stdout.write(`      [kafka-cluster] ${m}\n`);
  let db: TestDatabase;
  let stack: IsolatedStack;
  let pool: ReturnType<typeof createPool>;
  const workers: ChildWorker[] = [];
  let temporal: Awaited<ReturnType<typeof testTemporalClient>>;

  before(async () => {
    db = await createTestDatabase();
    pool = db.pool;
    temporal = await testTemporalClient();
    const external = { DATABASE_URL: db.url, TEMPORAL_ADDRESS: temporal.connection.options.address };
    stack = isolatedStack({
      linkKafkaJars: true,
      extraEnv: {
        ...external,
        LOCAL_KAFKA_BROKERS: '3',
        KAFKA_TOPIC: uniqueName('cluster-events'),
        KAFKA_DEAD_LETTER_TOPIC: uniqueName('cluster-dlq'),
        CONSUMER_GROUP: uniqueName('cluster-group'),
        RELAY_TASK_QUEUE: uniqueName('cluster-relay'),
        CONSUMER_TASK_QUEUE: uniqueName('cluster-consumer'),
        RELAY_BATCH_SIZE: '200',
        METRICS_PORT_BASE: '0', // no metrics endpoints: the shared stack's workers may hold those ports
      },
    });
    const { config } = stack;
    const t0 = Date.now();
    await stackUp(config, say);
    say(`3 nodes up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    await ensureTopics(createKafka(config, uniqueName('cluster-setup')), config);
    await pool.query('INSERT INTO accounts (account_id) SELECT unnest($1::bigint[])', [ACCOUNTS]);

    const logDir = path.join(stack.dir, 'logs', 'workers');
    const env = childEnv(stack, external);
    workers.push(startChildWorker('relay-worker', compiledScript('workers/relay.worker.ts'), logDir, env));
    workers.push(startChildWorker('consumer-worker', compiledScript('examples/payments/consumer-worker.ts'), logDir, env));
    await waitForPollers(temporal.client, [config.relay.taskQueue!, config.consumer.taskQueue!], 180_000);
    await startShard(temporal.client, config.relay.taskQueue!, { batchSize: 200 });
  });

  after(async () => {
    await stopChildWorkers(workers, 5000);
    await terminateStartedShards();
    await temporal?.connection.close();
    if (stack) await stackDown(stack.config);
    stack?.remove();
    await db?.drop();
  });

  it('creates the topics with 3 replicas and min.insync.replicas=2', async () => {
    const admin = createKafka(stack.config, uniqueName('cluster-check')).admin();
    await admin.connect();
    try {
      const { topics } = await admin.fetchTopicMetadata({ topics: [stack.config.kafka.topic] });
      assert.ok(topics[0]!.partitions.length > 0);
      for (const p of topics[0]!.partitions) assert.equal(p.replicas.length, 3, `partition ${p.partitionId} has 3 replicas`);
      const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: 2 /* TOPIC */, name: stack.config.kafka.topic, configNames: ['min.insync.replicas'] }] });
      assert.equal(resources[0]!.configEntries.find((c) => c.configName === 'min.insync.replicas')?.configValue, '2');
    } finally {
      await admin.disconnect();
    }
  });

  it('loses nothing and credits nothing twice when a partition leader is killed, with no worker restarted', async () => {
    let committed = 0;
    let producing = true;
    const producer = (async () => {
      for (let n = 0; producing; n++) {
        const payload = { event_id: `cluster-${n}`, type: 'payment_confirmed', account_id: ACCOUNTS[n % ACCOUNTS.length], amount: 1 + (n % 89) };
        await pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [payload]);
        committed++;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const pause = (s: number) => new Promise((r) => setTimeout(r, s * 1000));
    const creditedCount = async () => (await pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events`)).rows[0].n as number;

    await eventually('events flowing end to end before the kill', async () => (await creditedCount()) > 100, 120_000, 500);
    const admin = createKafka(stack.config, uniqueName('cluster-leader')).admin();
    await admin.connect();
    const { topics } = await admin.fetchTopicMetadata({ topics: [stack.config.kafka.topic] });
    await admin.disconnect();
    const leader = topics[0]!.partitions.find((p) => p.partitionId === 0)!.leader;
    const pid = clusterNodePid(cachePaths(stack.dir), leader);
    assert.ok(pid, `node ${leader} leads partition 0 and runs`);
    const creditedAtKill = await creditedCount();
    const committedAtKill = committed;
    say(`kill -9 node ${leader} (pid ${pid}), leader of partition 0; ${committedAtKill} committed, ${creditedAtKill} credited so far`);
    process.kill(pid, 'SIGKILL');

    await pause(20);
    producing = false;
    await producer;
    assert.ok(committed > committedAtKill + 100, 'events kept being committed after the kill');
    say(`producer done: ${committed} events committed`);

    await eventually('every committed event published', async () => {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`);
      return rows[0].n === 0;
    }, 240_000, 1000);
    const expected = async () =>
      (await pool.query(`SELECT (payload->>'account_id')::bigint AS account_id, sum((payload->>'amount')::bigint)::bigint AS total
                           FROM temporal_outbox.outbox_events GROUP BY 1 ORDER BY 1`)).rows.map((r) => [String(r.account_id), String(r.total)]);
    const balances = async () =>
      (await pool.query(`SELECT account_id, balance FROM accounts WHERE balance <> 0 ORDER BY account_id`)).rows.map((r) => [String(r.account_id), String(r.balance)]);
    await eventually('every committed event credited', async () => JSON.stringify(await balances()) === JSON.stringify(await expected()), 240_000, 1000).catch((err: Error) => {
      for (const w of workers) say(`${w.name} log, last lines:\n${tailOf(w.logFile, 40)}`);
      throw err;
    });

    const { rows: [counts] } = await pool.query(`SELECT (SELECT count(*)::int FROM temporal_outbox.outbox_events) AS outbox,
                                                         (SELECT count(*)::int FROM temporal_outbox.inbox_processed_events) AS inbox,
                                                         (SELECT count(*)::int FROM temporal_outbox.inbox_parked_events) AS inbox_parked,
                                                         (SELECT count(*)::int FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL) AS outbox_parked`);
    assert.equal(counts.outbox, committed, 'every committed insert is in the outbox');
    assert.equal(counts.inbox, committed, 'each event recorded once in the inbox');
    assert.equal(counts.inbox_parked, 0);
    assert.equal(counts.outbox_parked, 0);
    assert.deepEqual(await balances(), await expected(), 'each account credited exactly its events');
    for (const w of workers) assert.ok(w.process.exitCode === null && w.process.signalCode === null, `${w.name} kept running (never restarted): see ${w.logFile}`);
    say(`${committed} events, each published and credited exactly once; ${committed - committedAtKill} of them committed after the kill`);
  });
});


import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config/env';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { assignedPartitions, creditedAfter, joinedAfter } from '../kit/consumer-log-reads';
import { componentDatabaseUrl, createTestDatabase, type TestDatabase } from '../kit/database';
import { startFaultProxy, type FaultLink, type FaultProxy } from '../kit/fault-proxy';
import { CreditStream } from '../kit/credit-stream';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// A consumer that stepped aside must be out of its group for good until it decides to come back.
// Two step-asides of consumer A, as the network soak met them one after the other: first over a
// reset Kafka link (its leave cannot arrive, and kafkajs's run loop crashes while it stops), then
// the bad timing of a PostgreSQL black hole: its link goes silent and, just after, a third
// consumer joins the group. The rebalance that join starts cannot finish while A's chunks
// wait on the dead link (A answers it only once it steps aside, and B only once its own chunks,
// some applied on A, are done), so A steps aside in the middle of it. A must be out of the group
// within 60 s of the fault and stay out until the heal — never rejoin on its own — then come back
// within 30 s of the heal; balances exact.
const TAKEOVER_BOUND_MS = 60_000;
const REJOIN_BOUND_MS = 30_000;
// How long A must stay out after the takeover: longer than a session timeout and a rebalance
// timeout together, the time a member that did not really leave needs to show up again.
const STAYS_OUT_MS = 35_000;
const STEP_ASIDE = 'a link failed its health check: stepping aside until it answers again';

describe('consumer stepping aside while its group rebalances', function () {
  this.timeout(900_000);
  let db: TestDatabase;
  let proxy: FaultProxy;
  let topic: { topic: string; remove(): Promise<void> };
  const processes: ConsumerProcess[] = [];
  const accounts = 60;
  const partitions = 6;
  const streams: CreditStream[] = [];
  // Set by the first test, which the second continues from.
  let pgLink: FaultLink | undefined;
  let group = '';
  let env: Record<string, string> = {};
  let consumers: { a: ConsumerProcess; b: ConsumerProcess } | undefined;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(partitions);
    proxy = await startFaultProxy();
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [accounts]);
  });
  after(async () => {
    for (const s of streams) await s.stop();
    for (const p of processes) await p.stop('SIGKILL');
    await proxy?.close();
    await topic?.remove();
    await db?.drop();
  });

  const assignment = (p: ConsumerProcess) => assignedPartitions(p, topic.topic);
  const rejoinedAfter = (p: ConsumerProcess, since: number) => p.logs.some((l) => l.msg === 'consumer worker rejoined' && (l.time as number) >= since);
  /**
   * Joins logged by `p` after its first step-aside since `since` and before its new membership's
   * (the last join before "consumer worker rejoined", which follows it): none may be.
   */
  const strayJoins = (p: ConsumerProcess, since: number) => {
    const aside = p.logs.find((l) => l.msg === STEP_ASIDE && (l.time as number) >= since)?.time as number | undefined;
    if (aside === undefined) return [];
    const back = p.logs.find((l) => l.msg === 'consumer worker rejoined' && (l.time as number) >= aside)?.time as number | undefined;
    const joins = p.logs.filter((l) => l.msg === 'joined consumer group' && (l.time as number) > aside && (back === undefined || (l.time as number) <= back));
    return (back === undefined ? joins : joins.slice(0, -1)).map((l) => `${(l.time as number) - aside} ms after the step-aside: ${String(l.memberId)}`);
  };
  const members = async (group: string): Promise<number> => {
    const admin = testKafka().admin();
    await admin.connect();
    try {
      return (await admin.describeGroups([group])).groups[0]?.members.length ?? 0;
    } finally {
      await admin.disconnect();
    }
  };

  const tail = (p: ConsumerProcess, since: number) =>
    p.logs
      .filter((l) => (l.time as number) >= since && l.msg !== 'batch applied' && l.level !== 20)
      .map((l) => `${(l.time as number) - since} ms: ${String(l.msg)} ${JSON.stringify(l.memberId ?? l.err ?? l.error ?? l.reason ?? l.assignment ?? '')}`)
      .slice(0, 60)
      .join('\n');
  /** Traffic stops, the group drains it: every account's balance is what the streams sent, each event once. */
  const assertBalancesExact = async () => {
    for (const s of streams) await s.stop();
    await eventually('the group to consume everything', () => groupCaughtUp(testKafka(), group, topic.topic), 120_000, 500);
    const { rows } = await db.pool.query<{ account_id: string; balance: string }>('SELECT account_id, balance FROM accounts ORDER BY account_id');
    const expected = (account: number) => streams.reduce((sum, s) => sum + (s.expected.get(account) ?? 0), 0);
    for (const row of rows) assert.equal(Number(row.balance), expected(Number(row.account_id)), `account ${row.account_id}: lost 0, double-applied 0`);
    const inbox = await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events');
    assert.equal(inbox.rows[0].n, streams.reduce((sum, s) => sum + s.unique, 0));
  };
  const whole = process.env.GRAY_MATRIX === '1';

  it('after a step-aside over a reset Kafka link, the member that left never joins again by itself; A rejoins within 30 s of the heal', async () => {
    pgLink = await proxy.link(uniqueName('consumer-a-pg'), { host: '127.0.0.1', port: loadStackConfig().local.pgPort });
    const broker = loadConfig().kafka.brokers[0]!;
    const kafkaLink = await proxy.link(uniqueName('consumer-a-kafka'), { host: broker.slice(0, broker.lastIndexOf(':')), port: Number(broker.slice(broker.lastIndexOf(':') + 1)) });
    group = uniqueName('gray-group');
    const taskQueue = uniqueName('gray-consumer-tq');
    env = consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue, partitions, extra: { CONSUMER_BATCH_SIZE: '200' } });
    const throughProxy = new URL(componentDatabaseUrl({ DATABASE_URL: db.url }, 'consumer')!);
    throughProxy.host = pgLink.address;
    // The broker advertises its own address; the route sends A's connections to it through the link.
    const a = spawnConsumer({ ...env, CONSUMER_DATABASE_URL: throughProxy.toString(), KAFKA_BROKER_ROUTES: `${broker}=${kafkaLink.address}` });
    const b = spawnConsumer(env);
    processes.push(a, b);
    consumers = { a, b };
    await Promise.all([waitUntilRunning(a), waitUntilRunning(b)]);
    streams.push(new CreditStream(topic.topic, 'gray-rebalance-1', accounts));
    await eventually('A and B to split the partitions and credit', async () => assignment(a).length > 0 && assignment(b).length > 0 && creditedAfter(a, 0) && creditedAfter(b, 0), 120_000, 250);

    // First step-aside: A's Kafka link resets every connection; A steps aside, then the heal.
    await kafkaLink.reset();
    const reset = Date.now();
    await a.waitForLog((l) => l.msg === STEP_ASIDE && (l.time as number) >= reset, TAKEOVER_BOUND_MS);
    await eventually('B to hold every partition', async () => assignment(b).length === partitions && (await members(group)) === 1, TAKEOVER_BOUND_MS, 500).catch((err: Error) => {
      throw new Error(`${err.message}\nA:\n${tail(a, reset)}\nB:\n${tail(b, reset)}`);
    });
    await kafkaLink.heal({ oldConnections: 'dead' });
    const kafkaHeal = Date.now();
    await eventually('A to rejoin after the Kafka heal', async () => rejoinedAfter(a, kafkaHeal) && assignment(a).length > 0, REJOIN_BOUND_MS, 250).catch((err: Error) => {
      throw new Error(`${err.message}\nA:\n${tail(a, reset)}`);
    });
    // The member that stepped aside never joined again by itself: A's only join since its
    // step-aside is its new membership's (a member left over would hold partitions it never applies).
    assert.deepEqual(strayJoins(a, reset), [], `A's stepped-aside member joined the group again\nA:\n${tail(a, reset)}`);
    // Never more than A and B in the group, for longer than a crashed run loop's restart takes.
    await eventually('the group to settle at A and B', async () => (await members(group)) === 2, 30_000, 500);
    const settled = Date.now() + 15_000;
    while (Date.now() < settled) {
      const n = await members(group);
      if (n > 2) throw new Error(`${n} members in the group after A's rejoin, not 2\nA:\n${tail(a, reset)}`);
      await sleep(1_000);
    }
    await eventually('A to credit after the Kafka heal', async () => creditedAfter(a, kafkaHeal), 60_000, 250);
    // Without the second part, this one's outcome: nothing lost, nothing applied twice.
    if (!whole) await assertBalancesExact();
  });

  (whole ? it : it.skip)('then A steps aside in the middle of a rebalance (a PostgreSQL black hole as a third consumer joins): out within 60 s, stays out until the heal, rejoins within 30 s, balances exact', async () => {
    assert.ok(consumers && pgLink, 'the first part ran');
    const { a, b } = consumers;
    const link = pgLink;
    streams.push(new CreditStream(topic.topic, 'gray-rebalance-2', accounts));
    await link.blackHole();
    const fault = Date.now();
    // The third member's join starts the rebalance A will step aside in.
    const c = spawnConsumer(env);
    processes.push(c);
    const healthy = () => [b, c];
    const why = (err: Error) => new Error(`${err.message}\nmembers ${JSON.stringify(healthy().map(assignment))}\nA:\n${tail(a, fault)}\nB:\n${tail(b, fault)}\nA stderr: ${a.stderr.join('').slice(-1500)}`);
    const healthyHoldAll = async () => {
      const held = new Set(healthy().flatMap(assignment));
      return held.size === partitions && (await members(group)) === healthy().length;
    };
    await eventually('B and C to hold every partition, A out of the group', async () => joinedAfter(c, fault) && (await healthyHoldAll()), TAKEOVER_BOUND_MS, 500).catch((err: Error) => {
      throw why(err);
    });
    const takeover = Date.now() - fault;
    const asideAt = a.logs.find((l) => l.msg === STEP_ASIDE && (l.time as number) >= fault)?.time as number | undefined;
    assert.ok(asideAt !== undefined, 'A stepped aside');

    // A stays out: the group keeps B and C only, holding every partition, until the heal.
    const until = Date.now() + STAYS_OUT_MS;
    while (Date.now() < until) {
      if (!(await healthyHoldAll()) || strayJoins(a, fault).length > 0) throw why(new Error(`A came back into the group ${Date.now() - fault} ms after the fault, before the heal`));
      await sleep(1_000);
    }
    await eventually('B and C to credit after the fault', async () => healthy().every((p) => creditedAfter(p, fault)), 30_000, 250);

    await link.heal({ oldConnections: 'dead' });
    const heal = Date.now();
    await eventually('A to rejoin and be given partitions', async () => rejoinedAfter(a, heal) && joinedAfter(a, heal) && assignment(a).length > 0, REJOIN_BOUND_MS, 250).catch((err: Error) => {
      throw why(err);
    });
    assert.deepEqual(strayJoins(a, fault), [], `A's stepped-aside member joined the group again\nA:\n${tail(a, fault)}`);
    const rejoin = Date.now() - heal;
    await eventually('A to credit again', async () => creditedAfter(a, heal), 60_000, 250);

    await assertBalancesExact();
    process.stdout.write(`      consumer step-aside mid-rebalance: stepped aside ${asideAt - fault} ms after the fault, out of the group by ${takeover} ms, stayed out until the heal, rejoined ${rejoin} ms after it; balances exact\n`);
  });
});

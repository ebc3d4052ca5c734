import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { createPool } from '../../src/db/pool';
import { cachePaths } from '../../tools/local-stack/paths';
import { ensurePostgres, stopPostgres } from '../../tools/local-stack/postgres';
import { consumerEnv, groupCaughtUp, produceEvents, spawnConsumer, waitUntilRunning, type ConsumerProcess, type PaymentEvent } from '../kit/consumer-harness';
import { uniqueName } from '../kit/ids';
import { isolatedStack } from '../kit/isolated-stack';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';
import { migrateWithExample } from '../kit/database';

const SESSION_TIMEOUT_MS = 10_000;
const OUTAGE_MS = 2.5 * SESSION_TIMEOUT_MS;

// A PostgreSQL outage longer than the consumer group's session timeout, while a consumer holds a
// batch it cannot apply: the consumer keeps heartbeating while the batch waits, so it stays the
// same member of the group (no rebalance, no rejoin), commits nothing it has not applied, and
// once PostgreSQL is back applies the batch exactly once. PostgreSQL here is a cluster of its
// own (the shared stack's is never stopped); Kafka and Temporal are the shared ones.
describe('consumer: a PostgreSQL outage longer than the session timeout causes no rebalance', function () {
  this.timeout(300_000);
  const stack = isolatedStack();
  const paths = cachePaths(stack.dir);
  const databaseUrl = stack.config.database.url;
  const kafka = testKafka();
  const group = uniqueName('pg-outage-group');
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const pool = createPool(databaseUrl, { max: 2, connectionTimeoutMillis: 2000 });

  before(async () => {
    await ensurePostgres(stack.config, paths, () => undefined);
    await migrateWithExample(databaseUrl);
    await pool.query('INSERT INTO accounts (account_id) VALUES (1), (2), (3)');
    topic = await createTestTopic(1);
  });
  after(async () => {
    await consumer?.stop('SIGKILL');
    await pool.end().catch(() => undefined);
    await topic?.remove();
    await stopPostgres(paths).catch(() => undefined);
    stack.remove();
  });

  const events = (prefix: string, n: number): PaymentEvent[] => Array.from({ length: n }, (_, i) => ({ event_id: `${prefix}-${i}`, account_id: 1 + (i % 3), amount: 1 + i }));
  const total = (list: PaymentEvent[]) => list.reduce((sum, e) => sum + e.amount, 0);
  const members = async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [g] = (await admin.describeGroups([group])).groups;
      return { state: g!.state, memberIds: g!.members.map((m) => m.memberId) };
    } finally {
      await admin.disconnect();
    }
  };
  const committed = async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [t] = await admin.fetchOffsets({ groupId: group, topics: [topic.topic] });
      return Number(t!.partitions[0]!.offset);
    } finally {
      await admin.disconnect();
    }
  };
  const joins = () => consumer!.logs.filter((l) => l.msg === 'joined consumer group').length;

  it('keeps its membership through the outage and credits everything once afterwards', async () => {
    consumer = spawnConsumer(
      consumerEnv({
        databaseUrl,
        topic: topic.topic,
        group,
        taskQueue: uniqueName('pg-outage-queue'),
        partitions: 1,
        extra: { CONSUMER_SESSION_TIMEOUT_MS: String(SESSION_TIMEOUT_MS), METRICS_PORT_BASE: '0' },
      }),
    );
    await waitUntilRunning(consumer);
    const before = events('before', 60);
    await produceEvents(kafka, topic.topic, before);
    await eventually('the first events credited and committed', () => groupCaughtUp(kafka, group, topic.topic), 90_000);
    const membership = await members();
    assert.equal(membership.state, 'Stable');
    assert.equal(membership.memberIds.length, 1);
    assert.equal(joins(), 1);
    const committedBefore = await committed();
    assert.equal(committedBefore, before.length);

    await stopPostgres(paths);
    const during = events('during', 60);
    await produceEvents(kafka, topic.topic, during);
    // The consumer fetches the batch and waits on it: longer than the session timeout, twice over.
    await sleep(OUTAGE_MS);
    const duringOutage = await members();
    assert.deepEqual(duringOutage, membership, 'same member, group stable: no eviction, no rebalance');
    assert.equal(joins(), 1, 'never rejoined');
    assert.equal(await committed(), committedBefore, 'nothing committed that is not applied');

    await ensurePostgres(stack.config, paths, () => undefined);
    await eventually('the held batch credited and committed after PostgreSQL is back', () => groupCaughtUp(kafka, group, topic.topic), 120_000);
    const { rows } = await pool.query(`SELECT (SELECT sum(balance)::int FROM accounts) AS credited, (SELECT count(*)::int FROM temporal_outbox.inbox_processed_events) AS applied`);
    assert.deepEqual(rows[0], { credited: total(before) + total(during), applied: before.length + during.length }, 'nothing lost, nothing credited twice');
    assert.deepEqual(await members(), membership, 'still the same member afterwards');
    assert.equal(joins(), 1);
  });
});

import assert from 'node:assert/strict';
import { ConfigResourceTypes, type Admin } from 'kafkajs';
import { setUp } from '../../src/setup';
import { loadConfig, type Config } from '../../src/config/env';
import { topicRetentionCheck } from '../../src/doctor/checks/topic-retention';
import { runChecks } from '../../src/doctor/run-doctor';
import { readTopicRetention, setTopicRetention } from '../../src/kafka/topic-retention';
import { consumerEnv, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testKafka } from '../kit/kafka';

// Worker start-up (bundling workflows, joining the group) on a busy shared 2-core machine.
const STARTUP_MS = 240_000;

// The inbox forgets processed ids after INBOX_RETENTION_MS (14 d by default); Kafka must not be
// able to redeliver an event after that. What counts is the topic's real retention on the
// broker, here a topic created beforehand by someone else with 30 days.
const DAY = 86_400_000;

describe('redelivery horizon against the topic\'s real retention', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let admin: Admin;
  let topic: string;
  let config: Config;
  let env: Record<string, string>;
  const consumers: ConsumerProcess[] = [];

  before(async () => {
    db = await createTestDatabase();
    admin = testKafka().admin();
    await admin.connect();
    topic = uniqueName('retention-topic');
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: String(30 * DAY) }, { name: 'max.message.bytes', value: '500000' }] },
        { topic: `${topic}.dlq`, numPartitions: 1, replicationFactor: 1 },
      ],
    });
    env = consumerEnv({ databaseUrl: db.url, topic, group: uniqueName('retention-group'), taskQueue: uniqueName('retention-credit'), partitions: 1, extra: { KAFKA_RETENTION_CHECK_MS: '2000' } });
    config = loadConfig({ ...process.env, ...env });
  });
  after(async () => {
    for (const c of consumers) await c.stop('SIGKILL');
    await admin?.deleteTopics({ topics: [topic, `${topic}.dlq`] }).catch(() => undefined);
    await admin?.disconnect();
    await db?.drop();
  });

  const doctorVerdict = async () => (await runChecks({ db: db.pool, config }, [topicRetentionCheck]))[0]!;
  const topicSetting = async (name: string) => {
    const { resources } = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [name] }] });
    return resources[0]!.configEntries[0]!.configValue;
  };

  it('a consumer refuses to start on a topic kept 30 days, and doctor names the fix', async () => {
    assert.equal(config.kafka.topicRetentionMs, 7 * DAY, 'the environment alone says 7 days, which would pass');
    const check = await doctorVerdict();
    assert.equal(check.status, 'fail');
    assert.match(check.problems[0]!.message, new RegExp(`topic ${topic} keeps messages for ${30 * DAY} ms`));
    assert.match(check.problems[0]!.fix, /npx temporal-outbox setup/);

    const consumer = spawnConsumer(env);
    consumers.push(consumer);
    const exit = await consumer.exited;
    assert.deepEqual(exit, { code: 1, signal: null });
    assert.match(consumer.stderr.join(''), /RedeliveryHorizonError: topic .* keeps messages for 2592000000 ms .* credited twice\. Fix: /);
  });

  it('flags infinite retention too', async () => {
    await setTopicRetention(admin, topic, -1);
    const check = await doctorVerdict();
    assert.equal(check.status, 'fail');
    assert.match(check.problems[0]!.message, /keeps messages for ever \(retention\.ms=-1\)/);
  });

  it('setup reconciles the topic to KAFKA_TOPIC_RETENTION_MS and keeps its other settings; doctor is then satisfied', async () => {
    const done = await setUp(config);
    assert.match(done.topicRetention, new RegExp(`retention changed from for ever to ${7 * DAY} ms`));
    assert.deepEqual(await readTopicRetention(admin, topic), { topic, retentionMs: 7 * DAY, cleanupPolicy: 'delete' });
    assert.equal(await topicSetting('max.message.bytes'), '500000', 'the topic\'s other overrides survive');
    assert.equal((await doctorVerdict()).status, 'ok');
    assert.match((await setUp(config)).topicRetention, /as KAFKA_TOPIC_RETENTION_MS says/);
  });

  it('a running consumer re-reads it and stops when someone raises it on the broker', async () => {
    const consumer = spawnConsumer(env);
    consumers.push(consumer);
    await consumer.waitForLog((l) => l.msg === 'consumer worker running', STARTUP_MS);
    await setTopicRetention(admin, topic, 20 * DAY);
    const exit = await Promise.race([consumer.exited, new Promise((r) => setTimeout(() => r('still running'), 60_000))]);
    assert.deepEqual(exit, { code: 1, signal: null });
    assert.ok(consumer.logs.some((l) => l.msg === 'the topic can now redeliver events the inbox will have forgotten: stopping'));
    assert.match(consumer.stderr.join(''), /keeps messages for 1728000000 ms/);
  });
});

// With routing, a consumer also reads the routed topics of the types it handles: each of them
// must fit inside the inbox horizon, not only the default topic.
describe('redelivery horizon of a routed topic', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let admin: Admin;
  const defaultTopic = uniqueName('retention-default');
  const routedTopic = uniqueName('retention-routed');
  let config: Config;
  let env: Record<string, string>;
  const consumers: ConsumerProcess[] = [];

  before(async () => {
    db = await createTestDatabase();
    admin = testKafka().admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: defaultTopic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: String(7 * DAY) }] },
        { topic: routedTopic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: String(30 * DAY) }] },
        { topic: `${defaultTopic}.dlq`, numPartitions: 1, replicationFactor: 1 },
      ],
    });
    env = consumerEnv({
      databaseUrl: db.url,
      topic: defaultTopic,
      group: uniqueName('retention-routed-group'),
      taskQueue: uniqueName('retention-routed-credit'),
      partitions: 1,
      extra: { KAFKA_TOPIC_ROUTES: `order_shipped=${routedTopic}`, CONSUMER_HANDLERS: 'payment_confirmed,order_shipped' },
    });
    config = loadConfig({ ...process.env, ...env });
  });
  after(async () => {
    for (const c of consumers) await c.stop('SIGKILL');
    await admin?.deleteTopics({ topics: [defaultTopic, routedTopic, `${defaultTopic}.dlq`] }).catch(() => undefined);
    await admin?.disconnect();
    await db?.drop();
  });

  it('doctor and the consumer refuse the routed topic kept 30 days; setup brings it in line', async () => {
    const before = (await runChecks({ db: db.pool, config }, [topicRetentionCheck]))[0]!;
    assert.equal(before.status, 'fail');
    assert.equal(before.problems.length, 1, 'the default topic (7 days) is fine');
    assert.match(before.problems[0]!.message, new RegExp(`topic ${routedTopic} keeps messages for ${30 * DAY} ms`));

    const consumer = spawnConsumer(env);
    consumers.push(consumer);
    assert.deepEqual(await consumer.exited, { code: 1, signal: null });
    assert.match(consumer.stderr.join(''), new RegExp(`RedeliveryHorizonError: topic ${routedTopic} keeps messages`));

    const done = await setUp(config);
    assert.match(done.topicRetention, new RegExp(`topic ${routedTopic} retention changed from ${30 * DAY} ms to ${7 * DAY} ms`));
    assert.match(done.topicRetention, new RegExp(`topic ${defaultTopic} retention ${7 * DAY} ms, as KAFKA_TOPIC_RETENTION_MS says`));
    assert.equal((await runChecks({ db: db.pool, config }, [topicRetentionCheck]))[0]!.status, 'ok');
  });
});

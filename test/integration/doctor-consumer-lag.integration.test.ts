import assert from 'node:assert/strict';
import { loadConfig } from '../../src/config/env';
import { consumerLagCheck } from '../../src/doctor/checks/consumer-lag';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';

describe('doctor: consumer lag', () => {
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(2);
  });
  after(async () => {
    await topic?.remove();
    await db?.drop();
  });

  it('fails while events wait and nothing is applied, and is healthy once the group caught up', async () => {
    const group = uniqueName('doctor-group');
    const config = loadConfig({ ...process.env, DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, CONSUMER_GROUP: group });
    const producer = testKafka().producer();
    await producer.connect();
    await producer.send({ topic: topic.topic, messages: Array.from({ length: 5 }, (_, i) => ({ key: String(i % 2), value: `m${i}` })) });
    await producer.disconnect();

    const behind = await consumerLagCheck({ db: db.pool, config });
    assert.equal(behind.status, 'fail');
    assert.equal(behind.facts.find((f) => f.label === 'lag (messages)')?.value, 5);
    assert.match(behind.problems[0]!.fix, /npm run worker:consumer/);

    const admin = testKafka().admin();
    await admin.connect();
    const ends = await admin.fetchTopicOffsets(topic.topic);
    await admin.setOffsets({ groupId: group, topic: topic.topic, partitions: ends.map((e) => ({ partition: e.partition, offset: e.high })) });
    await admin.disconnect();

    const caughtUp = await consumerLagCheck({ db: db.pool, config });
    assert.equal(caughtUp.status, 'ok');
    assert.equal(caughtUp.facts.find((f) => f.label === 'lag (messages)')?.value, 0);
  });
});

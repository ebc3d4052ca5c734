import assert from 'node:assert/strict';
import { loadConfig, type Config } from '../../src/config/env';
import { HEADERS } from '../../src/kafka/message-format';
import { defineHandler } from '../../src/inbox/handler';
import { runConsumerWorker } from '../../workers/consumer.worker';
import { consumerEnv } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// The consumer fetches ahead: while a chunk is being applied (here, held inside its handler),
// kafkajs fetches again and another partition's new events are applied. The held partition
// keeps its order: its later events wait for the held one, and its committed offset does not
// move past it (a crash now must redeliver it). The real worker (runConsumerWorker) on the real
// services, with a handler of the test's own that holds one event until the test lets it go.
describe('consumer: fetching ahead while a chunk is applied, in order per partition', function () {
  this.timeout(240_000);
  const HELD_ID = 'gated-3';
  const EVENT_TYPE = 'gated_test_event';
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let config: Config;
  const stop = new AbortController();
  let worker: Promise<unknown>;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const kafka = testKafka();

  // Each event creates the account of its number: what the test reads as "applied".
  const handler = defineHandler<{ n: number }>({
    eventType: EVENT_TYPE,
    validate: (p) => (typeof p.n === 'number' ? { ok: true, data: { n: p.n } } : { ok: false, reason: 'n must be a number' }),
    async apply(tx, event) {
      if (event.eventId === HELD_ID) {
        held = true;
        await released;
      }
      await tx.query('INSERT INTO accounts (account_id, balance) VALUES ($1, 0)', [event.data.n]);
    },
  });

  const message = (partition: number) => (n: number) => ({
    partition,
    value: JSON.stringify({ event_id: `gated-${n}`, type: EVENT_TYPE, n }),
    headers: { [HEADERS.eventId]: `gated-${n}`, [HEADERS.eventType]: EVENT_TYPE },
  });
  const applied = async () => (await db.pool.query<{ account_id: string }>('SELECT account_id FROM accounts ORDER BY account_id')).rows.map((r) => Number(r.account_id));
  const committedOffset = async (partition: number) => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const [entry] = await admin.fetchOffsets({ groupId: config.kafka.consumerGroup, topics: [topic.topic] });
      return Number(entry!.partitions.find((p) => p.partition === partition)!.offset);
    } finally {
      await admin.disconnect();
    }
  };

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(2);
    const env = consumerEnv({
      databaseUrl: db.url,
      topic: topic.topic,
      group: uniqueName('fetch-ahead-group'),
      taskQueue: uniqueName('fetch-ahead'),
      partitions: 2,
      extra: {
        INBOX_CONSUMER: 'fetch-ahead',
        // Chunks of 5 events: a full batch, so it flies beside the held one.
        CONSUMER_BATCH_SIZE: '5',
        // Fetch ahead of every fetch, however small (the default does so from 1,000 events on).
        CONSUMER_FETCH_AHEAD_MIN_EVENTS: '0',
        METRICS_PORT_BASE: '0',
        LOG_LEVEL: 'warn',
      },
    });
    config = loadConfig({ ...process.env, ...env });
    worker = runConsumerWorker(config, { handlers: [handler], signal: stop.signal });
    worker.catch(() => undefined);
  });

  after(async () => {
    release();
    stop.abort();
    await worker?.catch(() => undefined);
    await topic?.remove();
    await db?.drop();
  });

  it("another partition's new events are applied while a chunk is held; the held partition waits, in order, its offset too", async () => {
    const producer = kafka.producer();
    await producer.connect();
    try {
      // Partition 0, offsets 0–4: one chunk, whose third event (offset 2) is held in its handler.
      await producer.send({ topic: topic.topic, messages: [1, 2, 3, 4, 5].map(message(0)) });
      await eventually('the first chunk is being applied and held', async () => held, 180_000);
      // Sent while it is held, to partition 1: fetched and applied all the same (kafkajs fetches
      // again once every partition's handler returned, and the handler does not wait for the flight).
      await producer.send({ topic: topic.topic, messages: [11, 12, 13, 14, 15].map(message(1)) });
      await eventually("partition 1's events applied", async () => (await applied()).length === 5, 60_000);
      await eventually("partition 1's offset committed", async () => (await committedOffset(1)) === 5, 30_000);
      // More for partition 0 (offsets 5–9): they wait for the held one.
      await producer.send({ topic: topic.topic, messages: [6, 7, 8, 9, 10].map(message(0)) });
    } finally {
      await producer.disconnect();
    }

    // Give a chunk that jumps the queue, or a premature commit, time to happen.
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.deepEqual(await applied(), [11, 12, 13, 14, 15], "partition 0's later events wait for the held one");
    assert.ok((await committedOffset(0)) <= 0, `partition 0 committed ${await committedOffset(0)} while offsets 0–4 are not applied`);

    release();
    await eventually('every event applied', async () => (await applied()).length === 15, 60_000);
    await eventually("partition 0's offset moved past both of its chunks", async () => (await committedOffset(0)) === 10, 60_000);
  });
});

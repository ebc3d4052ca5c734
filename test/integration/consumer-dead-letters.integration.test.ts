import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Kafka } from 'kafkajs';
import { PROJECT_ROOT } from '../../src/config/env';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, wireMessage, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);

// The dead-letter path never stalls a partition: a bad message is parked in PostgreSQL first,
// its dead-letter copy is owed by the parked row, and whatever Kafka says about that copy
// (topic missing, message too large) the partition moves on and later good events are credited.
// A copy is sent once: a redelivery (a killed worker, offsets reset) finds it already sent.
// Parked refusals (an unknown account) are redriven once their cause is fixed: credited once.
describe('consumer: dead letters never stall a partition; redrive credits once', function () {
  this.timeout(300_000);
  const kafka = testKafka();
  let db: TestDatabase;
  const consumers: ConsumerProcess[] = [];
  const topics: string[] = [];

  const bad = (id: string, extra: Record<string, unknown> = {}) => ({
    key: '1',
    value: JSON.stringify({ event_id: id, type: 'payment_confirmed', account_id: 1, ...extra }),
    headers: { 'event-id': id, 'event-type': 'payment_confirmed' },
  });
  const good = (id: string, account: number, amount: number) => wireMessage({ event_id: id, account_id: account, amount }, 0);
  const balance = async (account: number) => Number((await db.pool.query('SELECT balance FROM accounts WHERE account_id = $1', [account])).rows[0]?.balance ?? NaN);
  /** The parked rows of one topic's messages (each test has its own topic). */
  const parked = async (topic: string) =>
    (
      await db.pool.query(
        `SELECT id::text, event_id, reason, dead_letter_state, dead_letter_error, dead_letter_value IS NOT NULL AS keeps_bytes, redriven_at
           FROM temporal_outbox.inbox_parked_events WHERE topic = $1 ORDER BY kafka_offset`,
        [topic],
      )
    ).rows;

  async function produce(topic: string, messages: { key: string; value: string; headers: Record<string, string> }[]) {
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, messages });
    await producer.disconnect();
  }
  async function newTopic(): Promise<string> {
    const t = await createTestTopic(1);
    topics.push(t.topic, `${t.topic}.dlq`);
    return t.topic;
  }
  function start(topic: string, group: string, taskQueue: string): ConsumerProcess {
    const c = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic, group, taskQueue, partitions: 1, extra: { CONSUMER_DEAD_LETTER_RETRY_MS: '1000' } }));
    consumers.push(c);
    return c;
  }

  before(async () => {
    db = await createTestDatabase();
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (1, 0), (2, 0)');
  });
  after(async () => {
    for (const c of consumers) await c.stop('SIGKILL');
    const admin = kafka.admin();
    await admin.connect();
    await admin.deleteTopics({ topics }).catch(() => undefined);
    await admin.disconnect();
    await db?.drop();
  });

  describe('the dead-letter topic is missing', () => {
    let topic: string;
    let dlq: string;
    const group = uniqueName('dlq-group');
    const taskQueue = uniqueName('dlq-queue');

    it('parks the bad events, credits the later good ones, and sends the copies once the topic is back', async () => {
      topic = await newTopic();
      dlq = `${topic}.dlq`;
      await waitUntilRunning(start(topic, group, taskQueue));
      // The worker created its dead-letter topic at start; an operator deletes it.
      await deleteTopic(kafka, dlq);

      await produce(topic, [good('dl-a', 1, 100), bad('dl-bad-1'), good('dl-b', 1, 200), bad('dl-bad-2', { amount: -5 }), good('dl-unknown-account', 777, 50), good('dl-c', 1, 300)]);
      await eventually('the group to commit past every message', () => groupCaughtUp(kafka, group, topic), 90_000);
      assert.equal(await balance(1), 600, 'the good events after the bad ones are credited');
      const rows = await parked(topic);
      assert.deepEqual(
        rows.map((r) => [r.event_id, r.dead_letter_state]),
        [
          ['dl-bad-1', 'pending'],
          ['dl-bad-2', 'pending'],
          ['dl-unknown-account', null],
        ],
        'parked in PostgreSQL; the copies are still owed (a handler refusal owes none)',
      );
      assert.ok(rows[0].keeps_bytes, 'the pending copy keeps the original bytes for the retry');
      assert.match(String(rows[0].dead_letter_error), /UNKNOWN_TOPIC|topic|partition/i);
      assert.equal(await topicExists(kafka, dlq), false, 'nothing recreated the topic behind the operator');

      // The operator recreates the topic: the sweep sends the pending copies.
      await createTopic(kafka, dlq);
      await eventually('both copies sent', async () => (await parked(topic)).filter((r) => r.dead_letter_state === 'sent').length === 2, 60_000);
      const copies = await readTopic(kafka, dlq, 2);
      assert.deepEqual(copies.map((c) => c.parkedId).sort(), rows.slice(0, 2).map((r) => r.id).sort());
      assert.deepEqual(copies.map((c) => c.value).sort(), [bad('dl-bad-1').value, bad('dl-bad-2', { amount: -5 }).value].sort(), 'the original bytes');
      assert.ok((await parked(topic)).slice(0, 2).every((r) => !r.keeps_bytes), 'a sent copy drops the bytes it kept');
    });

    it('a killed worker and a full redelivery send no copy twice and credit nothing twice', async () => {
      const first = consumers.at(-1)!;
      await first.stop('SIGKILL');
      // Replay the whole partition from the start to a new worker (the group must be empty first).
      await eventually('the killed member to leave the group', async () => (await groupState(kafka, group)) === 'Empty', 60_000, 500);
      const admin = kafka.admin();
      await admin.connect();
      await admin.resetOffsets({ groupId: group, topic, earliest: true });
      await admin.disconnect();
      assert.equal(await groupCaughtUp(kafka, group, topic), false, 'the group starts over');
      await waitUntilRunning(start(topic, group, taskQueue));
      await eventually('the replay to commit past every message', () => groupCaughtUp(kafka, group, topic), 90_000);
      await sleep(3000); // three sweep rounds
      assert.equal(await messageCount(kafka, dlq), 2, 'still exactly one copy per bad message');
      assert.equal(await balance(1), 600);
      assert.equal((await parked(topic)).length, 3);
    });

    it('redrive credits a parked event once its account exists, exactly once however often redriven', async () => {
      const cli = (...args: string[]) =>
        run(process.execPath, [...nodeScript('src/cli/main.ts'), 'inbox', 'redrive', ...args], {
          cwd: PROJECT_ROOT,
          env: { ...process.env, DATABASE_URL: db.url, CONSUMER_TASK_QUEUE: taskQueue, TEMPORAL_CALL_TIMEOUT_MS: '60000' },
        }).catch((err: { stdout: string; code: number }) => ({ stdout: err.stdout, code: err.code }));
      const refused = (await parked(topic)).find((r) => r.event_id === 'dl-unknown-account')!;
      assert.equal(refused.reason, 'unknown account');

      // Cause not fixed yet: refused again, still parked, nothing credited.
      const early = await cli('--id', refused.id);
      assert.match(early.stdout, /refused again, still parked/);
      await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (777, 0)');
      assert.equal(await balance(777), 0);

      const once = await cli('--id', refused.id);
      assert.match(once.stdout, /1 parked event\(s\) applied \(1 credited now/);
      assert.equal(await balance(777), 50);
      const twice = await cli('--all');
      assert.equal(await balance(777), 50, 'a second redrive credits nothing');
      assert.match(twice.stdout, /0 parked event\(s\) applied/);
      const again = await cli('--id', refused.id);
      assert.match(again.stdout, /already redriven/);
      assert.equal(await balance(777), 50);
      const row = (await parked(topic)).find((r) => r.event_id === 'dl-unknown-account')!;
      assert.ok(row.redriven_at instanceof Date);
      const ledger = await db.pool.query(`SELECT count(*)::int AS n FROM payments_credit_ledger WHERE event_id = 'dl-unknown-account'`);
      assert.equal(ledger.rows[0].n, 1, 'one ledger line');
    });
  });

  it('a dead-letter copy too large for its topic: parked, given up with the reason, the partition moves on', async () => {
    const topic = await newTopic();
    const dlq = `${topic}.dlq`;
    // The dead-letter topic takes at most 2,000 bytes per message; the bad message is ~5 kB.
    await createTopic(kafka, dlq, { 'max.message.bytes': '2000' });
    const group = uniqueName('dlq-large-group');
    await waitUntilRunning(start(topic, group, uniqueName('dlq-large-queue')));
    await produce(topic, [bad('dl-large', { pad: 'x'.repeat(5000) }), good('dl-after-large', 2, 7)]);
    await eventually('the group to commit past both messages', () => groupCaughtUp(kafka, group, topic), 90_000);
    assert.equal(await balance(2), 7);
    const row = (await parked(topic)).find((r) => r.event_id === 'dl-large')!;
    assert.equal(row.dead_letter_state, 'failed');
    assert.match(String(row.dead_letter_error), /MESSAGE_TOO_LARGE|too large/i);
    assert.equal(row.keeps_bytes, false);
    assert.equal(await messageCount(kafka, dlq), 0);
  });
});

async function withAdmin<T>(kafka: Kafka, work: (admin: ReturnType<Kafka['admin']>) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

const topicExists = (kafka: Kafka, topic: string) => withAdmin(kafka, async (a) => (await a.listTopics()).includes(topic));

/**
 * Deletes the topic and waits until the broker refuses writes to it. The probe producer has the
 * topic's metadata cached, like the consumer's dead-letter producer: its produce requests go
 * straight to the broker, which acknowledges them for a moment after the deletion (until it drops
 * the partition), and the deletion then removes what it acknowledged.
 */
async function deleteTopic(kafka: Kafka, topic: string) {
  const probe = kafka.producer({ allowAutoTopicCreation: false, retry: { retries: 0 } });
  await probe.connect();
  try {
    await probe.send({ topic, messages: [{ value: 'probe' }] });
    await withAdmin(kafka, (a) => a.deleteTopics({ topics: [topic] }));
    await eventually(`${topic} deleted`, async () => !(await topicExists(kafka, topic)), 30_000);
    await eventually(`the broker to refuse writes to ${topic}`, () => probe.send({ topic, messages: [{ value: 'probe' }] }).then(() => false, () => true), 30_000, 500);
  } finally {
    await probe.disconnect();
  }
}

/** Creates the topic anew; retried while a deletion of the same name is still being carried out. */
async function createTopic(kafka: Kafka, topic: string, config: Record<string, string> = {}) {
  const configEntries = Object.entries(config).map(([name, value]) => ({ name, value }));
  await eventually(
    `${topic} created`,
    () => withAdmin(kafka, (a) => a.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1, configEntries }] })).catch(() => false),
    30_000,
    500,
  );
}

const messageCount = (kafka: Kafka, topic: string) =>
  withAdmin(kafka, async (a) => (await a.fetchTopicOffsets(topic)).reduce((n, p) => n + Number(p.high) - Number(p.low), 0));

const groupState = (kafka: Kafka, group: string) => withAdmin(kafka, async (a) => (await a.describeGroups([group])).groups[0]?.state);

async function readTopic(kafka: Kafka, topic: string, expected: number): Promise<{ parkedId: string; value: string }[]> {
  const consumer = kafka.consumer({ groupId: uniqueName('dlq-reader'), sessionTimeout: 10_000 });
  const seen: { parkedId: string; value: string }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push({ parkedId: message.headers?.['dlq-parked-id']?.toString() ?? '', value: message.value?.toString() ?? '' }) });
  await eventually(`${expected} dead-letter messages`, async () => seen.length >= expected, 30_000);
  await consumer.disconnect();
  return seen;
}

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '../../src/config/env';
import { HEADERS } from '../../src/kafka/message-format';
import { consumerEnv, groupCaughtUp, spawnConsumer, waitUntilRunning, wireMessage, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);

// Every kind of bad input is parked with its own reason, and the good events around it are
// still credited: one poison message never stalls a partition. (An event of a type no handler
// knows is not bad input: test/integration/consumer-handlers covers it.)
describe('consumer: bad input is parked with its reason and consumption continues', () => {
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let dlq: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const group = uniqueName('bad-group');
  const hostileId = `evt_'; DROP TABLE accounts; -- \u2603 "quoted"`;

  const raw = (value: string | null, headers: Record<string, string> = {}) => ({ key: '1', value, headers });
  const good = (id: string, account: number, amount: number) => wireMessage({ event_id: id, account_id: account, amount }, 0);
  const cases: { message: { key: string; value: string | null; headers: Record<string, string> }; reason: RegExp }[] = [
    { message: raw('{"event_id": "evt_bad_json", "amount": 5'), reason: /^malformed JSON: / },
    { message: raw('[1,2,3]'), reason: /^payload is not a JSON object$/ },
    { message: raw(null), reason: /^empty message/ },
    { message: raw(JSON.stringify({ type: 'payment_confirmed', account_id: 1, amount: 5 })), reason: /^missing event id$/ },
    { message: raw(JSON.stringify({ event_id: 'evt_no_account', type: 'payment_confirmed', amount: 5 })), reason: /^payment_confirmed v1: account_id: missing$/ },
    { message: raw(JSON.stringify({ event_id: 'evt_unknown_account', type: 'payment_confirmed', account_id: 999, amount: 5 })), reason: /^unknown account$/ },
    { message: raw(JSON.stringify({ event_id: 'evt_bad_account', type: 'payment_confirmed', account_id: -3, amount: 5 })), reason: /^payment_confirmed v1: account_id: must be a positive integer/ },
    { message: raw(JSON.stringify({ event_id: 'evt_float', type: 'payment_confirmed', account_id: 1, amount: 12.5 })), reason: /^payment_confirmed v1: amount: must be a positive safe integer in minor units \(got 12\.5\)$/ },
    { message: raw(JSON.stringify({ event_id: 'evt_negative', type: 'payment_confirmed', account_id: 1, amount: -500 })), reason: /^payment_confirmed v1: amount: must be a positive safe integer/ },
    { message: raw(JSON.stringify({ event_id: 'evt_zero', type: 'payment_confirmed', account_id: 1, amount: 0 })), reason: /^payment_confirmed v1: amount: must be a positive safe integer/ },
    { message: raw(JSON.stringify({ event_id: 'evt_string_amount', type: 'payment_confirmed', account_id: 1, amount: '500' })), reason: /^payment_confirmed v1: amount: must be a positive safe integer.*"500"/ },
    { message: raw('{"event_id":"evt_huge","type":"payment_confirmed","account_id":1,"amount":123456789012345678901234}'), reason: /^payment_confirmed v1: amount: must be a positive safe integer/ },
    { message: raw(JSON.stringify({ event_id: 'evt_absurd', type: 'payment_confirmed', account_id: 1, amount: 5_000_000_000_000 })), reason: /^amount 5000000000000 exceeds the maximum credit of 100000000000$/ },
    { message: raw(JSON.stringify({ event_id: 'evt_no_amount', type: 'payment_confirmed', account_id: 1 })), reason: /^payment_confirmed v1: amount: missing$/ },
    { message: raw(JSON.stringify({ event_id: 'evt_no_type', account_id: 1, amount: 5 })), reason: /^missing event type$/ },
    { message: raw(JSON.stringify({ event_id: 'evt_nul\u0000', type: 'payment_confirmed', account_id: 1, amount: 5 })), reason: /^event id contains control characters$/ },
    { message: raw(JSON.stringify({ event_id: 'x'.repeat(300), type: 'payment_confirmed', account_id: 1, amount: 5 })), reason: /^event id longer than 200 characters$/ },
    {
      message: raw(JSON.stringify({ event_id: 'evt_header', type: 'payment_confirmed', account_id: 1, amount: 5 }), { [HEADERS.eventId]: 'evt_other' }),
      reason: /^event id header does not match the payload event id$/,
    },
  ];

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(1);
    dlq = { topic: `${topic.topic}.dlq`, remove: async () => undefined };
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (1, 0), (2, 0)');
  });
  after(async () => {
    await consumer?.stop();
    await topic?.remove();
    const admin = testKafka().admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [dlq.topic] }).catch(() => undefined);
    await admin.disconnect();
    await db?.drop();
  });

  it('parks each bad message with its specific reason, credits the good ones (hostile strings included), and lists them', async () => {
    // Good events before, between and after the bad ones, all on one partition.
    const messages = [good('evt_good_1', 1, 100), ...cases.map((c) => c.message), good(hostileId, 2, 7), good('evt_good_2', 1, 200)];
    const kafka = testKafka();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: topic.topic, messages });
    await producer.disconnect();

    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('bad-queue'), partitions: 1 }));
    await waitUntilRunning(consumer);
    await eventually('the group to get past every message', () => groupCaughtUp(kafka, group, topic.topic));

    const balances = await db.pool.query('SELECT account_id::int, balance::int FROM accounts ORDER BY account_id');
    assert.deepEqual(balances.rows, [
      { account_id: 1, balance: 300 },
      { account_id: 2, balance: 7 },
    ]);
    const hostile = await db.pool.query('SELECT event_id FROM temporal_outbox.inbox_processed_events WHERE event_id = $1', [hostileId]);
    assert.equal(hostile.rowCount, 1, 'a hostile event id is just data');

    const parked = await db.pool.query<{ at_offset: string; reason: string; raw_value: string | null }>(
      'SELECT kafka_offset::text AS at_offset, reason, raw_value FROM temporal_outbox.inbox_parked_events ORDER BY kafka_offset',
    );
    assert.equal(parked.rowCount, cases.length);
    cases.forEach((c, i) => {
      const row = parked.rows[i]!;
      assert.equal(row.at_offset, String(i + 1), `case ${i} parked at its own offset`);
      assert.match(row.reason, c.reason, `case ${i}: ${c.message.value?.slice(0, 60)}`);
    });
    assert.equal(parked.rows[0]!.raw_value, '{"event_id": "evt_bad_json", "amount": 5', 'the raw value is kept as evidence');

    // The dead-letter topic receives a copy of each bad message with its reason (the unknown
    // account is detected in PostgreSQL and is parked in the table only).
    const dead = await readAll(dlq.topic, cases.length - 1);
    assert.equal(dead.length, cases.length - 1);
    assert.ok(dead.every((d) => d.reason.length > 0));

    // The operator's view.
    const { stdout } = await run(process.execPath, [...nodeScript('src/cli/main.ts'), 'inbox', 'parked', '--limit', '100'], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, DATABASE_URL: db.url },
    });
    assert.match(stdout, /reason: malformed JSON/);
    assert.match(stdout, /reason: unknown account/);
    assert.match(stdout, new RegExp(`${cases.length} parked event\\(s\\) shown`));
  });

  it('a redelivery of the same bad messages (new consumer group) parks nothing twice and credits nothing twice', async () => {
    await consumer?.stop();
    const replayGroup = uniqueName('bad-replay');
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: replayGroup, taskQueue: uniqueName('bad-queue'), partitions: 1 }));
    await waitUntilRunning(consumer);
    await eventually('the replay group to finish', () => groupCaughtUp(testKafka(), replayGroup, topic.topic));
    const parked = await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.inbox_parked_events');
    assert.equal(parked.rows[0].n, cases.length);
    const balances = await db.pool.query('SELECT balance::int FROM accounts ORDER BY account_id');
    assert.deepEqual(balances.rows.map((r) => r.balance), [300, 7]);
  });
});

async function readAll(topic: string, expected: number): Promise<{ reason: string }[]> {
  const consumer = testKafka().consumer({ groupId: uniqueName('dlq-reader'), sessionTimeout: 10_000 });
  const seen: { reason: string }[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void seen.push({ reason: message.headers?.['dlq-reason']?.toString() ?? '' }) });
  await eventually(`${expected} dead-letter messages`, async () => seen.length >= expected, 30_000);
  await consumer.disconnect();
  return seen;
}

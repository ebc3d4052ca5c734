import assert from 'node:assert/strict';
import { consumerEnv, spawnConsumer, wireMessage, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

// Worker start-up (bundling workflows, joining the group) on a busy shared 2-core machine.
const STARTUP_MS = 240_000;

// SIGTERM (a supervisor's stop, the demo's Ctrl-C) while credits are in flight: the worker must
// finish what it started and commit the offsets of exactly what it applied, then exit 0. Before,
// the Temporal SDK's own SIGTERM handler shut the worker down under the consumer's feet: the
// in-flight credit could never report back, its offsets stayed uncommitted, and the process
// hung until it was killed (the demo then left hundreds of "unconsumed" messages behind).
const PARTITIONS = 3;
const PER_PARTITION = 4_000;

describe('consumer: a graceful stop commits the offsets of what it applied', function () {
  this.timeout(240_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess | undefined;
  const group = uniqueName('stop-group');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(PARTITIONS);
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, 10)');
  });
  after(async () => {
    await consumer?.stop('SIGKILL');
    await topic?.remove();
    await db?.drop();
  });

  const applied = async () => (await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events')).rows[0].n as number;

  it('SIGTERM mid-flow: exits 0 and every partition\'s committed offset is exactly what it applied', async () => {
    // Event `p<partition>-<i>` sits at offset i of its partition (a fresh topic).
    const producer = testKafka().producer();
    await producer.connect();
    for (let p = 0; p < PARTITIONS; p++) {
      for (let i = 0; i < PER_PARTITION; i += 1_000) {
        const messages = Array.from({ length: 1_000 }, (_, j) => ({ ...wireMessage({ event_id: `p${p}-${i + j}`, account_id: 1 + ((i + j) % 10), amount: 1 }, i + j), partition: p }));
        await producer.send({ topic: topic.topic, messages });
      }
    }
    await producer.disconnect();

    // Small chunks: many credit workflows, so the stop lands while one is in flight.
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('stop-credit'), partitions: PARTITIONS, extra: { CONSUMER_BATCH_SIZE: '50' } }));
    await consumer.waitForLog((l) => l.msg === 'consumer worker running', STARTUP_MS);
    await eventually('crediting under way', async () => (await applied()) >= 1_000, 90_000, 20);
    consumer.proc.kill('SIGTERM');
    const exit = await Promise.race([consumer.exited, new Promise((r) => setTimeout(() => r('still running 60 s after SIGTERM'), 60_000))]);
    assert.deepEqual(exit, { code: 0, signal: null }, `a graceful stop exits 0 by itself; stderr: ${consumer.stderr.join('').slice(-2000)}`);
    const total = await applied();
    assert.ok(total < PARTITIONS * PER_PARTITION, `the stop must land mid-run (applied ${total} of ${PARTITIONS * PER_PARTITION})`);

    const admin = testKafka().admin();
    await admin.connect();
    const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic.topic] });
    await admin.disconnect();
    for (let p = 0; p < PARTITIONS; p++) {
      const { rows } = await db.pool.query<{ n: number; max: number | null }>(
        `SELECT count(*)::int AS n, max(split_part(event_id, '-', 2)::int) AS max FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE $1`,
        [`p${p}-%`],
      );
      const appliedHere = rows[0]!.n;
      // Applied in offset order, so the applied events are exactly offsets 0..n-1.
      assert.equal(rows[0]!.max ?? -1, appliedHere - 1, `partition ${p}: applied a prefix`);
      const offset = Number(committed!.partitions.find((c) => c.partition === p)!.offset);
      assert.equal(Math.max(offset, 0), appliedHere, `partition ${p}: committed offset ${offset}, applied ${appliedHere}`);
    }
  });
});

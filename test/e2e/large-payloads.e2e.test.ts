import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { consumerEnv, groupCaughtUp, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { procStatusKiB } from '../kit/process-memory';
import { createTestTopic, testKafka } from '../kit/kafka';
import { RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// Worker start-up (bundling workflows, joining the group) on a busy shared 2-core machine.
const STARTUP_MS = 240_000;

// A backlog of large but legal payloads through real relay and consumer worker processes, each
// under its production heap cap (workers/node-args.ts). 800 rows of 100–900 kB are about 400 MB:
// one unbounded relay batch of them (the default batch is 2,000 rows, so all of them) is over one
// and a half times the relay's 256 MB heap, more than the 3,000 rows of 150 kB that killed it
// before byte-bounded batches; with RELAY_BATCH_MAX_BYTES raised past the backlog this test fails
// with the relay worker dead of heap exhaustion. (The consumer takes near-limit messages about one
// per partition per fetch, so each row more costs the consumer's time, not its memory.)
// Passing means the worker that started is the one that finished: same pid, never restarted.
const LEGAL_ROWS = 800;
const ACCOUNTS = 20;
const MIN_PAYLOAD = 100_000;
const MAX_PAYLOAD = 900_000;
const OVERSIZED_PAYLOAD = 1_200_000;

describe('large payloads: a backlog of 100–900 kB rows flows under the workers\' heap caps', function () {
  this.timeout(1_200_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: RelayProcess;
  let consumer: ConsumerProcess;
  let temporal: { client: Client; connection: Connection };
  const group = uniqueName('large-group');

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
    temporal = await testTemporalClient();
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.kill9();
    await consumer?.stop('SIGKILL');
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  it('publishes and credits every legal row, parks the oversized one with its reason, and neither worker restarts', async () => {
    await db.pool.query(`INSERT INTO accounts (account_id) SELECT g FROM generate_series(1, $1::int) g`, [ACCOUNTS]);
    // Sizes spread evenly over 100–900 kB; the padding is md5 text, so PostgreSQL compresses it
    // on disk while the message Kafka carries is the full size.
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed',
              jsonb_build_object('event_id', 'large-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % $2::int, 'amount', g,
                                 'padding', repeat(md5(g::text), ($3::int + (g * ($4::int - $3::int) / $1::int)) / 32))
         FROM generate_series(1, $1::int) g`,
      [LEGAL_ROWS, ACCOUNTS, MIN_PAYLOAD, MAX_PAYLOAD],
    );
    const { rows: oversized } = await db.pool.query<{ id: string }>(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       VALUES ('payment_confirmed', jsonb_build_object('event_id', 'too-large', 'type', 'payment_confirmed', 'account_id', 1, 'amount', 1,
                                                       'padding', repeat('x', $1::int)))
       RETURNING id`,
      [OVERSIZED_PAYLOAD],
    );
    const { rows: sizes } = await db.pool.query(`SELECT min(payload_bytes)::int AS min, max(payload_bytes)::int AS max, sum(payload_bytes)::bigint AS total FROM temporal_outbox.outbox_events WHERE payload->>'event_id' <> 'too-large'`);
    assert.ok(sizes[0].min >= MIN_PAYLOAD && sizes[0].max <= MAX_PAYLOAD + 200, `legal payloads between 100 and 900 kB (got ${sizes[0].min}–${sizes[0].max})`);

    const expected = new Map<number, number>();
    for (let g = 1; g <= LEGAL_ROWS; g++) expected.set(1 + (g % ACCOUNTS), (expected.get(1 + (g % ACCOUNTS)) ?? 0) + g);
    const balances = async () => new Map((await db.pool.query(`SELECT account_id, balance FROM accounts`)).rows.map((r) => [Number(r.account_id), Number(r.balance)]));
    assert.ok([...(await balances()).values()].every((b) => b === 0), 'nothing credited before the workers start');

    const relayQueue = uniqueName('large-relay');
    relay = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: relayQueue });
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group, taskQueue: uniqueName('large-credit') }));
    await Promise.all([relay.waitUntilRunning(STARTUP_MS), consumer.waitForLog((l) => l.msg === 'consumer worker running', STARTUP_MS)]);
    const pids = { relay: relay.child.pid, consumer: consumer.proc.pid };
    // The production default batch of 2,000 rows: only the byte budget keeps it small.
    await startShard(temporal.client, relayQueue, { shardIndex: 0, shardCount: 1, batchSize: 2_000 });

    // An out-of-memory death is a signal (V8 aborts), not an exit code: check both.
    const alive = () => {
      assert.deepEqual([relay.child.exitCode, relay.child.signalCode], [null, null], `relay worker died:\n${relay.stderr.slice(-3000)}`);
      assert.deepEqual([consumer.proc.exitCode, consumer.proc.signalCode], [null, null], `consumer worker died:\n${consumer.stderr.join('').slice(-3000)}`);
    };
    await eventually('every legal row published', async () => {
      alive();
      const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NOT NULL`);
      return rows[0].n === LEGAL_ROWS;
    }, 600_000, 1_000);
    await eventually('every legal row credited', async () => {
      alive();
      const now = await balances();
      return [...expected].every(([account, total]) => now.get(account) === total);
    }, 600_000, 1_000);
    await eventually('consumer group caught up', async () => groupCaughtUp(testKafka(), group, topic.topic), 60_000, 1_000);

    const { rows: parked } = await db.pool.query(`SELECT id, last_error, published_at FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL`);
    assert.deepEqual(parked.map((r) => r.id), [oversized[0]!.id], 'only the oversized row is parked');
    assert.match(parked[0].last_error, /exceeds the 1000000-byte Kafka limit \(KAFKA_MAX_MESSAGE_BYTES\)/);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events`)).rows[0].n, LEGAL_ROWS, 'each legal event applied once');
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_parked_events`)).rows[0].n, 0);
    alive();
    assert.deepEqual({ relay: relay.child.pid, consumer: consumer.proc.pid }, pids, 'the same worker processes throughout');
    const peakMiB = (pid?: number) => Math.round((procStatusKiB(pid!)?.VmHWM ?? NaN) / 1024);
    process.stdout.write(`      ${(Number(sizes[0].total) / 1e6).toFixed(0)} MB of payloads; peak RSS relay ${peakMiB(pids.relay)} MiB, consumer ${peakMiB(pids.consumer)} MiB\n`);
  });
});

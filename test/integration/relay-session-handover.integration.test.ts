import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { createTestTopic } from '../kit/kafka';
import { relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// A session that spent its time hands the shard to the next session on the same worker without
// placing it again (RELAY_SESSION_KEEPS_WORKER_PATCH): placement is a round trip through
// Temporal, and at a steady trickle every handover paid it.
describe('relay session handover (real PostgreSQL, Kafka, Temporal)', function () {
  this.timeout(180_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: Awaited<ReturnType<typeof createTestTopic>>;
  let relay: InProcessRelay | undefined;

  before(async () => {
    temporal = await testTemporalClient();
  });
  after(async () => temporal?.connection.close());
  beforeEach(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(3);
  });
  afterEach(async () => {
    await terminateStartedShards();
    await relay?.close();
    relay = undefined;
    await topic.remove();
    await db.drop();
  });

  const insertRow = (n: number) =>
    db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [
      JSON.stringify({ event_id: `handover-${n}`, type: 'payment_confirmed', account_id: n % 7, amount: 1 }),
    ]);

  it('places the shard once while its sessions run out of time one after another at a trickle', async () => {
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    await insertRow(0);
    const handle = await startShard(temporal.client, relay.taskQueue, { batchSize: 50, sessionMs: 1_500 });
    // A row every 100 ms, well inside the drain grace: sessions end by their time, not drained.
    let inserted = 1;
    const countSessions = async () => {
      const history = await handle.fetchHistory();
      const scheduled = (name: string) => (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === name).length;
      return { sessions: scheduled('relayShardSession'), placements: scheduled('placeRelayShard') };
    };
    let counts = await countSessions();
    const deadline = Date.now() + 60_000;
    while (counts.sessions < 4 && Date.now() < deadline) {
      for (let i = 0; i < 10; i++, inserted++) {
        await insertRow(inserted);
        await new Promise((r) => setTimeout(r, 100));
      }
      counts = await countSessions();
    }
    await eventually('every row published', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rowCount === 0, 60_000);
    assert.ok(counts.sessions >= 4, `sessions: ${counts.sessions}`);
    assert.equal(counts.placements, 1, `${counts.placements} placements for ${counts.sessions} sessions`);
  });
});

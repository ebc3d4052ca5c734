import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import type { Client, Connection } from '@temporalio/client';
import { Client as PgClient, type Pool } from 'pg';
import { createPool } from '../../src/db/pool';
import { pruneProcessedEvents } from '../../src/inbox/prune-processed-events';
import { enqueue } from '../../src/outbox/enqueue';
import { planOutboxWalk } from '../../src/retention/plan-outbox-walk';
import { sweepPublishedOutbox } from '../../src/retention/sweep-published-outbox';
import { consumerEnv, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// Worker start-up (bundling workflows, joining the group) on a busy shared 2-core machine.
const STARTUP_MS = 240_000;

// Least privilege (migrations/0041_component_roles.sql): each component's role can do its own
// job and nothing else, and the workers really run under them. Login users are made for this
// test only, with random passwords, granted one component role each.
const COMPONENTS = ['producer', 'relay', 'consumer', 'retention'] as const;
type Component = (typeof COMPONENTS)[number];

describe('component roles: each worker connects with a role that can do only its own job', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  const logins = {} as Record<Component, { user: string; password: string; url: string }>;
  const pools = {} as Record<Component, Pool>;

  before(async () => {
    db = await createTestDatabase();
    for (const c of COMPONENTS) {
      const user = uniqueName(`t_${c}`).replace(/-/g, '_');
      const password = crypto.randomBytes(18).toString('base64url');
      // Identifiers cannot be bound parameters; both are generated above, never user input.
      await db.pool.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}' IN ROLE outbox_${c}`);
      const url = new URL(db.url);
      url.username = user;
      url.password = password;
      logins[c] = { user, password, url: url.toString() };
      pools[c] = createPool(url.toString(), { max: 2 });
    }
    await db.pool.query(`INSERT INTO accounts (account_id) VALUES (1), (2)`);
  });
  after(async () => {
    for (const c of COMPONENTS) await pools[c]?.end().catch(() => undefined);
    const users = COMPONENTS.map((c) => logins[c]?.user).filter(Boolean);
    await db?.drop();
    const admin = new PgClient({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
    await admin.connect();
    for (const u of users) await admin.query(`DROP ROLE IF EXISTS ${u}`).catch(() => undefined);
    await admin.end();
  });

  /** Runs `sql` as `who` and returns the SQLSTATE it fails with, or 'ok'. */
  const attempt = async (who: Component, sql: string, values: unknown[] = []) => {
    try {
      await pools[who].query(sql, values);
      return 'ok';
    } catch (err) {
      return (err as { code?: string }).code ?? String(err);
    }
  };
  const DENIED = '42501';

  it('grants each role its own job and refuses everything else', async () => {
    const { id } = await enqueue(pools.producer, { eventType: 'payment_confirmed', payload: { event_id: 'role-1', type: 'payment_confirmed', account_id: 1, amount: 5 } });
    assert.ok(id > 0, 'the producer role enqueues');
    const table = {
      // The relay reads and marks the outbox; it cannot touch accounts, the inbox, or delete.
      'relay reads outbox': [await attempt('relay', `SELECT payload FROM temporal_outbox.outbox_events`), 'ok'],
      'relay marks published': [await attempt('relay', `UPDATE temporal_outbox.outbox_events SET published_at = now() WHERE id = $1`, [id]), 'ok'],
      'relay reads accounts': [await attempt('relay', `SELECT balance FROM accounts`), DENIED],
      'relay credits accounts': [await attempt('relay', `UPDATE accounts SET balance = balance + 1`), DENIED],
      'relay deletes outbox rows': [await attempt('relay', `DELETE FROM temporal_outbox.outbox_events`), DENIED],
      'relay rewrites a payload': [await attempt('relay', `UPDATE temporal_outbox.outbox_events SET payload = '{}'`), DENIED],
      'relay writes the inbox': [await attempt('relay', `INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ('x', 'y')`), DENIED],
      // The consumer applies credits through the inbox; the outbox is not its business.
      'consumer records an event': [await attempt('consumer', `INSERT INTO temporal_outbox.inbox_processed_events (consumer, event_id) VALUES ('t', 'role-1')`), 'ok'],
      'consumer credits': [await attempt('consumer', `UPDATE accounts SET balance = balance + 5 WHERE account_id = 1`), 'ok'],
      'consumer deletes outbox rows': [await attempt('consumer', `DELETE FROM temporal_outbox.outbox_events`), DENIED],
      'consumer reads the outbox': [await attempt('consumer', `SELECT 1 FROM temporal_outbox.outbox_events`), DENIED],
      // Granted by 0043: a handler's refused event (unknown account) has the inbox row it just
      // wrote removed in the same transaction before it is parked. Narrowing this (a savepoint
      // instead of a DELETE) is open work; truncating the inbox is still refused.
      'consumer forgets inbox ids': [await attempt('consumer', `DELETE FROM temporal_outbox.inbox_processed_events WHERE consumer = 'nobody'`), 'ok'],
      'consumer truncates the inbox': [await attempt('consumer', `TRUNCATE temporal_outbox.inbox_processed_events`), DENIED],
      'consumer creates accounts': [await attempt('consumer', `INSERT INTO accounts (account_id) VALUES (99)`), DENIED],
      // Retention deletes; it cannot write events or money.
      'retention deletes published rows': [await attempt('retention', `DELETE FROM temporal_outbox.outbox_events WHERE published_at < now() - interval '1 day'`), 'ok'],
      'retention inserts events': [await attempt('retention', `INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('x', '{}')`), DENIED],
      'retention touches accounts': [await attempt('retention', `UPDATE accounts SET balance = 0`), DENIED],
      // Producers write events; they cannot read other events' payloads, publish or credit.
      'producer reads payloads': [await attempt('producer', `SELECT payload FROM temporal_outbox.outbox_events`), DENIED],
      'producer marks published': [await attempt('producer', `UPDATE temporal_outbox.outbox_events SET published_at = now()`), DENIED],
      'producer credits': [await attempt('producer', `UPDATE accounts SET balance = 1`), DENIED],
      'producer deletes': [await attempt('producer', `DELETE FROM temporal_outbox.outbox_events`), DENIED],
      // 0052: the insert trigger, running as the producer, reads the shard count to name the shards it wakes.
      'producer reads the shard count': [await attempt('producer', `SELECT shard_count FROM temporal_outbox.outbox_relay_layout`), 'ok'],
      'producer changes the shard layout': [await attempt('producer', `UPDATE temporal_outbox.outbox_relay_layout SET shard_count = 3`), DENIED],
    };
    const outcome = Object.fromEntries(Object.entries(table).map(([k, [got]]) => [k, got]));
    const expected = Object.fromEntries(Object.entries(table).map(([k, [, want]]) => [k, want]));
    assert.deepEqual(outcome, expected);
  });

  describe('the pipeline with every component under its own role', () => {
    let temporal: { client: Client; connection: Connection };
    let topic: { topic: string; remove(): Promise<void> };
    let relay: RelayProcess | undefined;
    let consumer: ConsumerProcess | undefined;
    before(async () => {
      temporal = await testTemporalClient();
      topic = await createTestTopic(2);
    });
    after(async () => {
      await terminateStartedShards();
      await relay?.kill9();
      await consumer?.stop('SIGKILL');
      await temporal?.connection.close();
      await topic?.remove();
    });

    it('publishes, credits and cleans up, and no password reaches any log', async () => {
      await db.pool.query(`UPDATE accounts SET balance = 0; DELETE FROM temporal_outbox.inbox_processed_events; DELETE FROM temporal_outbox.outbox_events`);
      // RELAY_/CONSUMER_DATABASE_URL carry the role; DATABASE_URL (owner) stays for the worker's
      // own setup only: topics. The workers' queries all go through their role's URL.
      const relayQueue = uniqueName('roles-relay');
      relay = new RelayProcess({ DATABASE_URL: db.url, RELAY_DATABASE_URL: logins.relay.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: relayQueue, LOG_LEVEL: 'debug' });
      consumer = spawnConsumer(
        consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('roles-group'), taskQueue: uniqueName('roles-credit'), partitions: 2, extra: { CONSUMER_DATABASE_URL: logins.consumer.url, LOG_LEVEL: 'debug' } }),
      );
      await Promise.all([relay.waitUntilRunning(STARTUP_MS), consumer.waitForLog((l) => l.msg === 'consumer worker running', STARTUP_MS)]);
      await startShard(temporal.client, relayQueue, { batchSize: 100 });

      for (let i = 0; i < 20; i++) {
        await enqueue(pools.producer, { eventType: 'payment_confirmed', payload: { event_id: `roles-${i}`, type: 'payment_confirmed', account_id: 1 + (i % 2), amount: 10 + i } });
      }
      const balances = async () => (await db.pool.query(`SELECT account_id::int, balance::int FROM accounts ORDER BY 1`)).rows.map((r) => r.balance);
      await eventually('credited under the consumer role', async () => JSON.stringify(await balances()) === JSON.stringify([190, 200]), 180_000, 500);
      assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n, 0, 'published under the relay role');

      // Retention under its role: published rows older than the cutoff go, and old inbox ids.
      await db.pool.query(`UPDATE temporal_outbox.outbox_events SET published_at = now() - interval '2 days', created_at = now() - interval '2 days'`);
      await db.pool.query(`UPDATE temporal_outbox.inbox_processed_events SET processed_at = now() - interval '30 days'`);
      const cutoff = new Date(Date.now() - 86_400_000);
      const walk = await planOutboxWalk(pools.retention, cutoff);
      const swept = await sweepPublishedOutbox(pools.retention, { cutoff, fromId: walk.fromId!, untilId: walk.untilId!, batchSize: 1000, deadline: Date.now() + 60_000 });
      assert.equal(swept.deleted, 20);
      const pruned = await pruneProcessedEvents(pools.retention, { horizonMs: 14 * 86_400_000, batchSize: 1000, timeBudgetMs: 60_000 });
      assert.equal(pruned.deleted, 20);

      const logs = relay.logLines.join('\n') + relay.stderr + JSON.stringify(consumer.logs) + consumer.stderr.join('');
      assert.ok(relay.logLines.some((l) => l.includes('relay worker running')) && consumer.logs.length > 0, 'the logs were captured');
      for (const c of COMPONENTS) assert.ok(!logs.includes(logins[c].password), `the ${c} password appears in a worker log`);
    });
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { migrateExample } from '../../examples/migrate';
import { migrate, readMigrations } from '../../src/db/migrate';
import { HEADERS } from '../../src/kafka/message-format';
import { consumerEnv, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// The previous release's layout (everything in public, its ledger public.schema_migrations),
// built from that release's own migration files, with what a running deployment holds: credits
// applied (inbox rows, ledger, balances), a recorded relay layout of 4 shards, and pending
// plain-SQL rows of several accounts. Upgraded in place by the documented command, then relayed
// and consumed by this release: the pending rows come out in per-account order, and every event
// applied before the upgrade is refused by the inbox when it is delivered again.
const LEGACY_DIR = path.join(__dirname, '..', 'fixtures', 'legacy-migrations');
const ACCOUNTS = [1, 2, 3, 4];
const PER_ACCOUNT = 5;

describe('upgrade in place from the previous release\'s public layout', function () {
  this.timeout(300_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  let relay: InProcessRelay | undefined;
  let consumer: ConsumerProcess | undefined;

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    topic = await createTestTopic(3);
    temporal = await testTemporalClient();
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.close();
    await consumer?.stop('SIGKILL');
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  /** The previous release's runner, as it was: public.schema_migrations, one transaction per file. */
  async function applyLegacyMigrations() {
    await db.pool.query(`CREATE TABLE schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    for (const file of fs.readdirSync(LEGACY_DIR).sort()) {
      const [, version, name] = /^(\d{4})_(.+)\.sql$/.exec(file)!;
      const client = await db.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query(fs.readFileSync(path.join(LEGACY_DIR, file), 'utf8'));
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [Number(version), name]);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    }
  }

  const applied = Array.from({ length: 8 }, (_, i) => ({ id: `old-${i + 1}`, account: ACCOUNTS[i % 4]!, amount: 100 + i }));

  it('upgrades with the documented command, keeping data, layout, order and the inbox', async () => {
    await applyLegacyMigrations();
    // What the running release left: credits applied through the inbox, their events published
    // (then set back to pending by an operator, so they are delivered again after the upgrade),
    // the relay's recorded layout, and pending rows of the seed's contract, interleaved.
    await db.pool.query(`INSERT INTO accounts (account_id) SELECT unnest($1::bigint[])`, [ACCOUNTS]);
    for (const e of applied) {
      await db.pool.query(`INSERT INTO outbox_events (event_type, payload, published_at) VALUES ('payment_confirmed', $1, now())`, [
        JSON.stringify({ event_id: e.id, type: 'payment_confirmed', account_id: e.account, amount: e.amount }),
      ]);
      await db.pool.query(`INSERT INTO inbox_processed_events (consumer, event_id) VALUES ('payments-credit', $1)`, [e.id]);
      await db.pool.query(`INSERT INTO payments_credit_ledger (consumer, event_id, account_id, amount) VALUES ('payments-credit', $1, $2, $3)`, [e.id, e.account, e.amount]);
      await db.pool.query(`UPDATE accounts SET balance = balance + $2 WHERE account_id = $1`, [e.account, e.amount]);
    }
    await db.pool.query(`UPDATE outbox_events SET published_at = NULL`);
    await db.pool.query(`INSERT INTO outbox_relay_layout (shard_count) VALUES (4)`);
    for (let seq = 1; seq <= PER_ACCOUNT; seq++) {
      for (const account of ACCOUNTS) {
        await db.pool.query(`INSERT INTO outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [
          JSON.stringify({ event_id: `pre-${account}-${seq}`, type: 'payment_confirmed', account_id: account, amount: seq }),
        ]);
      }
    }
    const before = await db.pool.query(`SELECT id, payload, shard_hash FROM outbox_events ORDER BY id`);

    // Plain `migrate` refuses, naming the command, and touches nothing.
    await assert.rejects(migrate(db.url), /temporal-outbox migrate --upgrade-from-public/);
    const { rows: stillPublic } = await db.pool.query(`SELECT to_regclass('public.outbox_events') IS NOT NULL AS there, to_regnamespace('temporal_outbox') IS NULL AS no_schema`);
    assert.deepEqual(stillPublic[0], { there: true, no_schema: true });

    const upgraded = await migrate(db.url, { upgradeFromPublic: true });
    assert.deepEqual(upgraded.map((m) => m.version), readMigrations().filter((m) => m.version > 52).map((m) => m.version), 'only the migrations after the previous release run');
    await migrateExample(db.url);
    assert.deepEqual(await migrate(db.url), [], 'then an ordinary migrate has nothing to do');

    const { rows: tables } = await db.pool.query<{ name: string }>(`SELECT schemaname || '.' || tablename AS name FROM pg_tables WHERE schemaname IN ('public', 'temporal_outbox') ORDER BY 1`);
    assert.deepEqual(tables.map((t) => t.name), [
      'public.accounts',
      'public.example_payments_migrations',
      'public.example_shipping_migrations',
      'public.payments',
      'public.payments_credit_ledger',
      'public.shipments',
      'temporal_outbox.inbox_parked_events',
      'temporal_outbox.inbox_processed_events',
      'temporal_outbox.inbox_skipped_event_types',
      'temporal_outbox.legacy_migrations',
      'temporal_outbox.migrations',
      'temporal_outbox.outbox_events',
      'temporal_outbox.outbox_relay_layout',
      'temporal_outbox.outbox_relay_workers',
    ]);
    const after = await db.pool.query(`SELECT id, payload, shard_hash FROM temporal_outbox.outbox_events ORDER BY id`);
    assert.deepEqual(after.rows, before.rows, 'every row kept, with its id and shard');
    const { rows: layout } = await db.pool.query(`SELECT shard_count, key_field FROM temporal_outbox.outbox_relay_layout`);
    assert.deepEqual(layout, [{ shard_count: 4, key_field: 'account_id' }], 'the recorded layout kept, and the previous release\'s key');
    const { rows: ledger } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.migrations`);
    assert.equal(ledger[0].n, readMigrations().length);

    // A plain-SQL producer after the upgrade, into the schema: its rows follow each account's.
    for (const account of ACCOUNTS) {
      await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [
        JSON.stringify({ event_id: `post-${account}`, type: 'payment_confirmed', account_id: account, amount: 1000 }),
      ]);
    }

    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('upgrade-group'), taskQueue: uniqueName('upgrade-credit') }));
    await waitUntilRunning(consumer);
    for (let shardIndex = 0; shardIndex < 4; shardIndex++) await startShard(temporal.client, relay.taskQueue, { shardIndex, shardCount: 4, batchSize: 7 });

    const oldCredit = (a: number) => applied.filter((e) => e.account === a).reduce((n, e) => n + e.amount, 0);
    const expected = ACCOUNTS.map((a) => [a, oldCredit(a) + (PER_ACCOUNT * (PER_ACCOUNT + 1)) / 2 + 1000]);
    const balances = async () => (await db.pool.query(`SELECT account_id::int AS a, balance::int AS b FROM accounts ORDER BY 1`)).rows.map((r) => [r.a, r.b]);
    await eventually('every new credit applied', async () => JSON.stringify(await balances()) === JSON.stringify(expected), 180_000);
    const { rows: pending } = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`);
    assert.equal(pending[0].n, 0);

    const messages = await readWholeTopic(topic.topic);
    for (const account of ACCOUNTS) {
      const ids = messages.filter((m) => m.key === String(account)).map((m) => m.headers[HEADERS.eventId]);
      const want = [
        ...applied.filter((e) => e.account === account).map((e) => e.id),
        ...Array.from({ length: PER_ACCOUNT }, (_, i) => `pre-${account}-${i + 1}`),
        `post-${account}`,
      ];
      assert.deepEqual(ids, want, `account ${account}: keyed by its id, in order across the upgrade`);
    }
    // Every event applied before was delivered again and refused: one inbox row, one ledger line each.
    await eventually('the consumer went past the redelivered events', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.inbox_processed_events`)).rowCount === applied.length + ACCOUNTS.length * (PER_ACCOUNT + 1), 60_000);
    const { rows: twice } = await db.pool.query(`SELECT count(*)::int AS n FROM payments_credit_ledger GROUP BY event_id HAVING count(*) > 1`);
    assert.deepEqual(twice, [], 'no event credited twice');
    assert.deepEqual(await balances(), expected, 'balances hold the old credits once');
  });
});

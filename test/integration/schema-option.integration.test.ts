import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { migrateExample } from '../../examples/migrate';
import { Pool } from 'pg';
import { migrate } from '../../src/db/migrate';
import { inTransaction } from '../../src/db/pool';
import { schemaPool } from '../../src/db/schema-client';
import { HEADERS } from '../../src/kafka/message-format';
import { enqueue } from '../../src/outbox/enqueue';
import { consumerEnv, spawnConsumer, waitUntilRunning, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// The library in a schema of the service's choosing (OUTBOX_SCHEMA / the `schema` options), end
// to end: migrated there, events enqueued and inserted by plain SQL there, published by a relay
// and applied by a consumer that both run with it, and nothing of the library anywhere else.
describe('a non-default library schema, end to end', function () {
  this.timeout(240_000);
  const SCHEMA = 'acme_outbox';
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  let relay: InProcessRelay | undefined;
  let consumer: ConsumerProcess | undefined;

  before(async () => {
    db = await createTestDatabase({ migrated: false });
    await migrate(db.url, { schema: SCHEMA, keyField: 'account_id' });
    await migrateExample(db.url);
    // As a service that puts the library in a schema of its own does (docs/managed-services.md):
    // its worker logins hold that schema's roles (the local stack's hold temporal_outbox_*), and
    // the example's tables are granted to them (its migrations grant to the default schema's).
    await db.pool.query(`DO $$ DECLARE c text; BEGIN
      FOREACH c IN ARRAY ARRAY['relay', 'consumer', 'retention'] LOOP
        IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'outbox_' || c || '_worker') THEN
          EXECUTE format('GRANT %I TO %I', '${SCHEMA}_' || c, 'outbox_' || c || '_worker');
        END IF;
      END LOOP;
    END $$`);
    await db.pool.query(`GRANT SELECT, UPDATE (balance, updated_at) ON accounts TO ${SCHEMA}_consumer`);
    await db.pool.query(`GRANT SELECT, INSERT ON payments_credit_ledger TO ${SCHEMA}_consumer`);
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

  it('migrates into acme_outbox, enqueues, relays and applies there', async () => {
    await db.pool.query('INSERT INTO accounts (account_id) VALUES (1), (2), (3)');
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      for (let i = 1; i <= 6; i++) {
        await enqueue(client, { eventType: 'payment_confirmed', payload: { event_id: `acme-${i}`, type: 'payment_confirmed', account_id: 1 + (i % 3), amount: 10 * i } }, { schema: SCHEMA });
      }
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    // A plain-SQL producer of the seed's contract, into the configured schema: keyed by account_id.
    await db.pool.query(`INSERT INTO ${SCHEMA}.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"event_id":"acme-sql","type":"payment_confirmed","account_id":3,"amount":7}')`);
    // The service's own pg Pool, handed to the library through schemaPool: enqueue without the
    // option, in a transaction on a client the pool checked out, lands in the schema too.
    const own = new Pool({ connectionString: db.url, max: 1 });
    try {
      await inTransaction(schemaPool(own, SCHEMA), (tx) => enqueue(tx, { eventType: 'payment_confirmed', payload: { event_id: 'acme-pool', type: 'payment_confirmed', account_id: 1, amount: 5 } }));
    } finally {
      await own.end();
    }
    const { rows: keys } = await db.pool.query(`SELECT payload ->> 'event_id' AS event_id, event_key FROM ${SCHEMA}.outbox_events ORDER BY outbox_events.id`);
    assert.deepEqual(keys.map((k) => k.event_key), ['2', '3', '1', '2', '3', '1', '3', '1'], 'every row keyed by its account, enqueued or not');

    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic, { OUTBOX_SCHEMA: SCHEMA }));
    consumer = spawnConsumer(consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: uniqueName('acme-group'), taskQueue: uniqueName('acme-credit'), extra: { OUTBOX_SCHEMA: SCHEMA } }));
    await waitUntilRunning(consumer);
    await startShard(temporal.client, relay.taskQueue, { batchSize: 10 });

    const balances = async () => (await db.pool.query(`SELECT account_id::int AS a, balance::int AS b FROM accounts ORDER BY 1`)).rows.map((r) => [r.a, r.b]);
    await eventually('every credit applied', async () => JSON.stringify(await balances()) === JSON.stringify([[1, 95], [2, 50], [3, 77]]), 120_000);
    const { rows: inbox } = await db.pool.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.inbox_processed_events`);
    assert.equal(inbox[0].n, 8);
    const { rows: pending } = await db.pool.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.outbox_events WHERE published_at IS NULL`);
    assert.equal(pending[0].n, 0);
    const messages = await readWholeTopic(topic.topic);
    assert.deepEqual(
      messages.filter((m) => m.key === '3').map((m) => m.headers[HEADERS.eventId]),
      ['acme-2', 'acme-5', 'acme-sql'],
      'account 3 in order, the plain-SQL row keyed as the enqueued ones',
    );
    const { rows: elsewhere } = await db.pool.query(
      `SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = 'temporal_outbox'`,
    );
    assert.equal(elsewhere[0].n, 0, 'no default schema was created');
  });
});

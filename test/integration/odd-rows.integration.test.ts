import assert from 'node:assert/strict';
import type { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config/env';
import { oddOutboxRowsCheck } from '../../src/doctor/checks/odd-outbox-rows';
import { runChecks } from '../../src/doctor/run-doctor';
import { HEADERS } from '../../src/kafka/message-format';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, relayTestConfig, startInProcessRelay, startShard, terminateStartedShards, type InProcessRelay } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// Rows a plain-SQL producer can write that our own API never would. Each is refused at INSERT
// with a named reason, parked with its reason, or handled as the contract says; none spins or
// vanishes.
describe('odd rows from plain-SQL producers', function () {
  this.timeout(180_000);
  let temporal: { client: Client; connection: Connection };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: InProcessRelay;

  before(async () => {
    temporal = await testTemporalClient();
    db = await createTestDatabase();
    topic = await createTestTopic(1);
    relay = await startInProcessRelay(relayTestConfig(db.url, topic.topic));
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.close();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const insertError = async (sql: string) => {
    try {
      await db.pool.query(sql);
      return 'inserted';
    } catch (err) {
      const e = err as { code?: string; constraint?: string };
      return `${e.code} ${e.constraint}`;
    }
  };

  it('refuses an id beyond 2^53 and an empty event_type at INSERT, naming the rule', async () => {
    assert.equal(
      await insertError(`INSERT INTO temporal_outbox.outbox_events (id, event_type, payload) VALUES (9007199254740993, 'payment_confirmed', '{"event_id":"huge-id","type":"payment_confirmed"}')`),
      '23514 outbox_events_id_fits_javascript',
    );
    assert.equal(await insertError(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('', '{"event_id":"no-type"}')`), '23514 outbox_events_event_type_not_empty');
    assert.equal(await insertError(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('  ', '{"event_id":"blank-type"}')`), '23514 outbox_events_event_type_not_empty');
    // The largest id JavaScript holds exactly is fine.
    assert.equal(await insertError(`INSERT INTO temporal_outbox.outbox_events (id, event_type, payload) VALUES (9007199254740991, 't', '{"event_id":"max-safe"}')`), 'inserted');
  });

  it('parks a row whose event_type disagrees with payload.type; publishes the max-safe id; leaves an already-published row alone', async () => {
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload, published_at) VALUES ('payment_confirmed', '{"event_id":"pre-published","type":"payment_confirmed","account_id":1,"amount":1}', now())`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_refunded', '{"event_id":"mismatch","type":"payment_confirmed","account_id":1,"amount":1}')`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"event_id":"good","type":"payment_confirmed","account_id":1,"amount":1}')`);
    await startShard(temporal.client, relay.taskQueue, { batchSize: 10 });
    await eventually('nothing pending', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL`)).rowCount === 0);

    const { rows: parked } = await db.pool.query(`SELECT payload->>'event_id' AS event_id, last_error FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL`);
    assert.deepEqual(parked, [{ event_id: 'mismatch', last_error: 'event_type "payment_refunded" disagrees with payload.type "payment_confirmed"' }]);
    const messages = await readWholeTopic(topic.topic);
    // The row inserted as already published is, by the contract, not pending: never sent.
    assert.deepEqual(messages.map((m) => m.headers[HEADERS.eventId]).sort(), ['good', 'max-safe']);
    // The largest safe id travels exactly and the right row is marked.
    assert.equal(messages.find((m) => m.headers[HEADERS.eventId] === 'max-safe')!.headers[HEADERS.outboxId], '9007199254740991');
    assert.equal((await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE id = 9007199254740991 AND published_at IS NOT NULL`)).rowCount, 1);
    assert.equal((await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n, 1, 'only the parked row is unpublished');
  });

  it('doctor reports parked rows by reason, and pending rows that predate the table checks', async () => {
    await terminateStartedShards();
    const doctor = async () => (await runChecks({ db: db.pool, config: loadConfig({ ...process.env, DATABASE_URL: db.url }) }, [oddOutboxRowsCheck]))[0]!;
    let check = await doctor();
    assert.equal(check.status, 'warn');
    assert.match(check.problems[0]!.message, /1 parked outbox rows: event_type "payment_refunded" disagrees with payload.type/);
    // A row written before migration 0042 (the checks are NOT VALID: old rows are not scanned).
    await db.pool.query(`ALTER TABLE temporal_outbox.outbox_events DROP CONSTRAINT outbox_events_event_type_not_empty`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('', '{"event_id":"legacy"}')`);
    check = await doctor();
    assert.equal(check.status, 'fail');
    assert.match(check.problems.at(-1)!.message, /1 pending outbox rows have an id beyond 2\^53 or an empty event_type/);
  });
});

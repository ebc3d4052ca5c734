import assert from 'node:assert/strict';
import { Client } from 'pg';
import { migrate } from '../../src/db/migrate';
import { readKeyField, recordKeyField } from '../../src/db/key-field';
import { enqueue } from '../../src/outbox/enqueue';
import { readLayout, ensureLayout } from '../../src/outbox/queries/relay-layout';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';

// The library alone (no example): it keys a row by no payload field until the service names one
// at setup; then a row inserted without a key, by plain SQL or by enqueue, takes that field, and
// its shard is the key's.
describe('the key field: what a row inserted without a key is keyed by', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase({ example: false });
  });
  after(async () => db?.drop());
  beforeEach(async () => db.pool.query('TRUNCATE temporal_outbox.outbox_events'));

  const rows = async () =>
    (await db.pool.query(`SELECT payload ->> 'event_id' AS id, event_key, shard_hash = hashtext(coalesce(event_key, payload ->> 'event_id')) AS sharded_by_key FROM temporal_outbox.outbox_events o ORDER BY o.id`)).rows;

  it('with none named, a keyless row is keyed by its event id, whatever its payload holds', async () => {
    assert.equal(await readKeyField(db.pool), undefined);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('t', '{"event_id":"e1","account_id":7}')`);
    const { rows: r } = await db.pool.query(`SELECT event_key, shard_hash = hashtext('e1') AS by_event FROM temporal_outbox.outbox_events`);
    assert.deepEqual(r, [{ event_key: null, by_event: true }]);
  });

  it('once named at setup, plain SQL and enqueue key rows by it, and an explicit key still wins', async () => {
    await migrate(db.url, { keyField: 'order_id' });
    assert.equal(await readKeyField(db.pool), 'order_id');
    assert.equal(await readLayout(db.pool), undefined, 'no shard count recorded by naming the field');
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES
      ('t', '{"event_id":"a","order_id":"o-1"}'), ('t', '{"event_id":"b","order_id":42}'), ('t', '{"event_id":"c"}')`);
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload, event_key) VALUES ('t', '{"event_id":"d","order_id":"o-1"}', 'mine')`);
    await enqueue(db.pool, { eventType: 't', payload: { event_id: 'e', order_id: 'o-2' } });
    assert.deepEqual(await rows(), [
      { id: 'a', event_key: 'o-1', sharded_by_key: true },
      { id: 'b', event_key: '42', sharded_by_key: true },
      { id: 'c', event_key: null, sharded_by_key: true },
      { id: 'd', event_key: 'mine', sharded_by_key: true },
      { id: 'e', event_key: 'o-2', sharded_by_key: true },
    ]);
  });

  it('keys the rows of a producer login granted INSERT alone, which cannot read the layout', async () => {
    await recordKeyField(db.pool, 'order_id');
    const login = uniqueName('producer').replace(/-/g, '_');
    await db.pool.query(`CREATE ROLE ${login} LOGIN PASSWORD 'producer-pass-1'`);
    try {
      await db.pool.query(`GRANT USAGE ON SCHEMA temporal_outbox TO ${login}; GRANT INSERT ON temporal_outbox.outbox_events TO ${login}`);
      const url = new URL(db.url);
      url.username = login;
      url.password = 'producer-pass-1';
      const producer = new Client({ connectionString: url.toString() });
      await producer.connect();
      try {
        await assert.rejects(producer.query('SELECT key_field FROM temporal_outbox.outbox_relay_layout'), /permission denied/);
        await producer.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('t', '{"event_id":"p","order_id":"o-9"}')`);
      } finally {
        await producer.end();
      }
      assert.deepEqual(await rows(), [{ id: 'p', event_key: 'o-9', sharded_by_key: true }]);
    } finally {
      await db.pool.query(`DROP OWNED BY ${login}; DROP ROLE ${login}`);
    }
  });

  it('the first relay fills its shard count into the row the key field created; later ones read it', async () => {
    assert.equal(await ensureLayout(db.pool, 4), 4);
    assert.equal(await ensureLayout(db.pool, 8), 4);
    assert.equal(await readKeyField(db.pool), 'order_id', 'the key field kept');
  });

  it('refuses an empty key field', async () => {
    await assert.rejects(recordKeyField(db.pool, ' '), /key field must be the name of a payload field/);
  });
});

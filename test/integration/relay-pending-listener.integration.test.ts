import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Client } from 'pg';
import { PendingListener } from '../../activities/relay/pending-listener';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { eventually } from '../kit/wait';

// The relay's idle waits check the shard, then wait for a NOTIFY. A commit whose notification
// arrives while the check is still running (its snapshot taken before the commit) is the case
// that used to be lost: the check saw no row, the notification woke no one, and the row waited
// out the whole timeout (a session's drain grace, the idle wait's fallback poll).
describe('relay pending listener: a notification that arrives during the check is not lost', function () {
  this.timeout(60_000);
  let db: TestDatabase;
  let listener: PendingListener;
  let checker: Client;

  before(async () => {
    db = await createTestDatabase();
    listener = new PendingListener(db.url);
    checker = new Client({ connectionString: db.url });
    await checker.connect();
  });
  after(async () => {
    await checker?.end().catch(() => undefined);
    await listener?.close();
    await db?.drop();
  });

  it('wakes a wait that starts after the notification, given the position taken before the check', async () => {
    await listener.ensureListening();
    const seen = listener.position();

    // The check, with its snapshot taken before the commit (held open so the overlap is certain).
    await checker.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await checker.query('SELECT count(*) FROM temporal_outbox.outbox_events');
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"event_id":"late-notify-1","type":"payment_confirmed","account_id":1,"amount":1}')`);
    await eventually('the notification received by the listener', async () => listener.position() > seen, 5_000, 10);
    const { rows } = await checker.query(`SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`);
    await checker.query('COMMIT');
    assert.equal(rows[0].n, 0, 'the check saw no pending row: the race is reproduced');

    // Nobody was waiting when it came: a wait that does not say what it has seen misses it…
    assert.equal(await listener.wait(300), false, 'a plain wait after the notification times out');
    // …while the wait that knows its check's position returns at once.
    assert.equal(await listener.wait(5_000, undefined, seen), true);
    assert.equal(await listener.wait(300, undefined, listener.position()), false, 'and only for a notification it has not seen');
  });

  it('wakes only the shards whose rows were inserted, and every shard on a notification that names none', async () => {
    await db.pool.query('INSERT INTO temporal_outbox.outbox_relay_layout (shard_count) VALUES (8) ON CONFLICT (singleton) DO UPDATE SET shard_count = EXCLUDED.shard_count');
    const event = (id: string, account: number) => `{"event_id":"${id}","type":"payment_confirmed","account_id":${account},"amount":1}`;
    const shardOf = async (account: number) =>
      (await checker.query(`SELECT (hashtext($1) & 2147483647) % 8 AS shard`, [String(account)])).rows[0].shard as number;
    // The shard column and the poll agree with this (the row's own shard_hash): checked on a real row.
    const { rows } = await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1) RETURNING (shard_hash & 2147483647) % 8 AS shard`, [event('shard-probe', 1)]);
    assert.equal(rows[0].shard, await shardOf(1));
    let other = 2;
    while ((await shardOf(other)) === rows[0].shard) other += 1;
    const mine = { shardIndex: rows[0].shard as number, shardCount: 8 };
    const notMine = { shardIndex: await shardOf(other), shardCount: 8 };
    await listener.ensureListening();

    const woken = async (insert: () => Promise<unknown>) => {
      const waits = [listener.wait(1_500, undefined, undefined, mine), listener.wait(1_500, undefined, undefined, notMine), listener.wait(1_500)];
      await insert();
      const [forMine, forNotMine, forAny] = await Promise.all(waits);
      return { forMine, forNotMine, forAny };
    };
    assert.deepEqual(await woken(async () => undefined), { forMine: false, forNotMine: false, forAny: false }, 'nothing inserted: nobody wakes');
    assert.deepEqual(
      await woken(() => db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [event('shard-only', 1)])),
      { forMine: true, forNotMine: false, forAny: true },
      "a row of one shard leaves the other shard's wait asleep",
    );
    assert.deepEqual(await woken(() => db.pool.query(`SELECT pg_notify('outbox_events_pending', '')`)), { forMine: true, forNotMine: true, forAny: true }, 'an empty payload wakes everyone');

    // The position check filters by shard too: a notification for another shard is no reason to poll.
    const seen = listener.position();
    await db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', $1)`, [event('shard-later', other)]);
    await eventually('the notification received', async () => listener.position() > seen, 5_000, 10);
    assert.equal(await listener.wait(300, undefined, seen, mine), false);
    assert.equal(await listener.wait(300, undefined, seen, notMine), true);
  });

  it('a producer login granted INSERT alone (not the outbox_producer role) still inserts, and its rows wake every shard', async () => {
    await db.pool.query('INSERT INTO temporal_outbox.outbox_relay_layout (shard_count) VALUES (8) ON CONFLICT (singleton) DO UPDATE SET shard_count = EXCLUDED.shard_count');
    const user = uniqueName('t_legacy_producer').replace(/-/g, '_');
    const password = crypto.randomBytes(18).toString('base64url');
    // Both generated here, never user input (identifiers cannot be bound parameters).
    await db.pool.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}'`);
    const url = new URL(db.url);
    url.username = user;
    url.password = password;
    const producer = new Client({ connectionString: url.toString() });
    try {
      await db.pool.query(`GRANT USAGE ON SCHEMA temporal_outbox TO ${user}; GRANT INSERT ON temporal_outbox.outbox_events TO ${user}`);
      await producer.connect();
      const layoutRead = await producer.query('SELECT shard_count FROM temporal_outbox.outbox_relay_layout').then(() => 'ok', (e: { code?: string }) => e.code);
      assert.equal(layoutRead, '42501', 'the login cannot read the layout');
      await listener.ensureListening();
      const everyShard = [0, 1, 2, 3, 4, 5, 6, 7].map((shardIndex) => listener.wait(5_000, undefined, undefined, { shardIndex, shardCount: 8 }));
      await producer.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) VALUES ('payment_confirmed', '{"event_id":"legacy-1","type":"payment_confirmed","account_id":1,"amount":1}')`);
      assert.deepEqual(await Promise.all(everyShard), [true, true, true, true, true, true, true, true]);
    } finally {
      await producer.end().catch(() => undefined);
      await db.pool.query(`REVOKE ALL ON temporal_outbox.outbox_events FROM ${user}; REVOKE ALL ON SCHEMA temporal_outbox FROM ${user}`).catch(() => undefined);
      await db.pool.query(`DROP ROLE IF EXISTS ${user}`).catch(() => undefined);
    }
  });
});

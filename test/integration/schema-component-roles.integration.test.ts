import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Client } from 'pg';
import { migrate } from '../../src/db/migrate';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';

// Two outboxes in one PostgreSQL cluster (here one database, two schemas): each schema's
// component roles (migrations/0056) reach that schema only, and a role of the same name that the
// library did not create is never taken over.
describe('component roles per schema: two outboxes in one cluster stay apart', function () {
  this.timeout(180_000);
  let db: TestDatabase;
  const suffix = uniqueName('r').replace(/-/g, '_');
  const [a, b, taken] = ['roles_a', 'roles_b', 'roles_c'].map((s) => `${s}_${suffix}`) as [string, string, string];
  const logins: { user: string; client: Client }[] = [];
  const createdRoles = [a, b, taken].flatMap((s) => ['producer', 'relay', 'consumer', 'retention'].map((c) => `${s}_${c}`));

  /** A login granted `role` only, connected to the test database. */
  const loginIn = async (role: string): Promise<Client> => {
    const user = uniqueName('t_login').replace(/-/g, '_');
    const password = crypto.randomBytes(18).toString('base64url');
    // Identifiers and password are generated here, never user input (they cannot be bound).
    await db.pool.query(`CREATE ROLE ${user} LOGIN PASSWORD '${password}' IN ROLE ${role}`);
    const url = new URL(db.url);
    url.username = user;
    url.password = password;
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    logins.push({ user, client });
    return client;
  };
  const attempt = async (client: Client, sql: string) => client.query(sql).then(() => 'ok', (err: { code?: string }) => err.code ?? String(err));
  const DENIED = '42501';

  before(async () => {
    db = await createTestDatabase({ migrated: false, example: false });
    await migrate(db.url, { schema: a });
    await migrate(db.url, { schema: b });
  });
  after(async () => {
    for (const { client } of logins) await client.end().catch(() => undefined);
    await db?.drop();
    const admin = new Client({ connectionString: db.url.replace(/\/[^/]*$/, '/postgres') });
    await admin.connect();
    for (const role of [...logins.map((l) => l.user), ...createdRoles]) await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
    await admin.end();
  });

  it("gives each schema roles of its own name, and a login with one schema's role nothing of the other's", async () => {
    const { rows } = await db.pool.query<{ rolname: string; comment: string }>(`SELECT rolname, shobj_description(oid, 'pg_authid') AS comment FROM pg_roles WHERE rolname = ANY($1) ORDER BY rolname`, [createdRoles.slice(0, 8)]);
    assert.equal(rows.length, 8, 'four roles per schema');
    assert.equal(rows.find((r) => r.rolname === `${a}_relay`)!.comment, `temporal-outbox: the relay role of schema ${a}`);

    const relayA = await loginIn(`${a}_relay`);
    const producerB = await loginIn(`${b}_producer`);
    const outcomes = {
      "a's relay reads a's outbox": [await attempt(relayA, `SELECT payload FROM ${a}.outbox_events`), 'ok'],
      "a's relay marks in a's outbox": [await attempt(relayA, `UPDATE ${a}.outbox_events SET published_at = now() WHERE id = -1`), 'ok'],
      "a's relay rewrites a payload in a": [await attempt(relayA, `UPDATE ${a}.outbox_events SET payload = '{}' WHERE id = -1`), DENIED],
      "a's relay reads b's outbox": [await attempt(relayA, `SELECT payload FROM ${b}.outbox_events`), DENIED],
      "a's relay marks in b's outbox": [await attempt(relayA, `UPDATE ${b}.outbox_events SET published_at = now() WHERE id = -1`), DENIED],
      "b's producer enqueues in b": [await attempt(producerB, `INSERT INTO ${b}.outbox_events (event_type, payload) VALUES ('thing_done', '{"event_id":"x1"}')`), 'ok'],
      "b's producer enqueues in a": [await attempt(producerB, `INSERT INTO ${a}.outbox_events (event_type, payload) VALUES ('thing_done', '{"event_id":"x2"}')`), DENIED],
    };
    for (const [what, [got, expected]] of Object.entries(outcomes)) assert.equal(got, expected, what);
  });

  it('refuses to take over a role of the same name that it did not create, and migrates nothing of that schema', async () => {
    await db.pool.query(`CREATE ROLE ${taken}_consumer NOLOGIN`);
    await assert.rejects(migrate(db.url, { schema: taken }), /role roles_c_\w+_consumer exists and temporal-outbox did not create it/);
    const { rows } = await db.pool.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [taken]);
    const applied = rows.length === 0 ? 0 : (await db.pool.query(`SELECT count(*)::int AS n FROM ${taken}.migrations WHERE version >= 56`)).rows[0].n;
    assert.equal(applied, 0, '0056 not recorded');
  });
});

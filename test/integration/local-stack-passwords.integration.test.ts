import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { loadStackConfig, type StackConfig as Config } from '../../tools/local-stack/stack-config';
import { LOCAL_PG_WORKER_LOGINS } from '../../tools/local-stack/local-credentials';
import { cachePaths } from '../../tools/local-stack/paths';
import { ensurePostgres, stopPostgres } from '../../tools/local-stack/postgres';
import { socketClient } from '../../tools/local-stack/postgres-auth';
import { childEnv, isolatedStack, type IsolatedStack } from '../kit/isolated-stack';
import { migrateWithExample } from '../kit/database';

// The local stack's PostgreSQL asks for a password on TCP: for a new cluster, and for a cluster
// initialised by an earlier release with trust authentication once the stack restarts it. Each
// worker has a login of its own holding only its component's role. On a PostgreSQL of its own
// (the shared stack's authentication is left as it is).

/** SQLSTATE of a failed connection, or 'ok'. */
async function connectAs(config: Config, user: string, password: string | undefined, database = 'outbox'): Promise<string> {
  const client = new Client({ host: '127.0.0.1', port: config.local.pgPort, user, password, database, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
    return 'ok';
  } catch (err) {
    // Without a password node-postgres stops as soon as the server asks for SCRAM: refused too.
    if (/SCRAM.*password must be a string/.test((err as Error).message)) return '28P01';
    return (err as { code?: string }).code ?? (err as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('local stack: password authentication and a login per worker', function () {
  this.timeout(180_000);
  let stack: IsolatedStack;
  let config: Config;
  const passwords = { LOCAL_PG_PASSWORD: crypto.randomBytes(12).toString('hex'), LOCAL_PG_RELAY_PASSWORD: crypto.randomBytes(12).toString('hex') };
  const log = () => undefined;

  before(() => {
    // The owner's and the relay's passwords from the environment; the others generated into the cache.
    stack = isolatedStack({ extraEnv: passwords });
    config = loadStackConfig(childEnv(stack), { workerLogins: true });
  });
  after(async () => {
    await stopPostgres(cachePaths(stack.dir)).catch(() => undefined);
    stack.remove();
  });

  it('a new cluster refuses TCP logins without the password and accepts each login with its own', async () => {
    assert.equal(await ensurePostgres(config, cachePaths(stack.dir), log), true, 'started by this test');
    assert.equal(await connectAs(config, 'outbox', undefined), '28P01', 'no password: refused');
    assert.equal(await connectAs(config, 'outbox', 'wrong-password'), '28P01', 'wrong password: refused');
    assert.equal(await connectAs(config, 'outbox', passwords.LOCAL_PG_PASSWORD), 'ok', 'the owner with LOCAL_PG_PASSWORD');
    const logins = config.local.pgLogins();
    assert.equal(logins.relay.password, passwords.LOCAL_PG_RELAY_PASSWORD);
    const generated = fs.readFileSync(path.join(stack.dir, 'postgres', 'credentials', LOCAL_PG_WORKER_LOGINS.consumer.user), 'utf8').trim();
    assert.equal(logins.consumer.password, generated, 'a password not in the environment comes from the cache folder');
    assert.equal((fs.statSync(path.join(stack.dir, 'postgres', 'credentials', LOCAL_PG_WORKER_LOGINS.consumer.user)).mode & 0o077), 0, 'readable by its owner only');
    for (const who of ['relay', 'consumer', 'retention'] as const) {
      assert.equal(await connectAs(config, logins[who].user, logins[who].password), 'ok', `${who} logs in`);
      assert.equal(await connectAs(config, logins[who].user, logins.owner.password), '28P01', `${who} with another login's password: refused`);
    }
    // The URLs the configuration derives carry the passwords: everything that used the
    // password-less defaults keeps working.
    assert.match(config.database.url, new RegExp(`^postgres://outbox:${passwords.LOCAL_PG_PASSWORD}@127\\.0\\.0\\.1:${config.local.pgPort}/outbox$`));
    assert.equal(new URL(String(config.database.workerUrls.consumer)).username, LOCAL_PG_WORKER_LOGINS.consumer.user);
  });

  it('the worker logins hold only their component roles once the schema is migrated', async () => {
    await migrateWithExample(config.database.url);
    const attempt = async (url: string, sql: string) => {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(sql);
        return 'ok';
      } catch (err) {
        return (err as { code?: string }).code;
      } finally {
        await client.end();
      }
    };
    const urls = { relay: String(config.database.workerUrls.relay), consumer: String(config.database.workerUrls.consumer), retention: String(config.database.workerUrls.retention) };
    assert.deepEqual(
      {
        relayReadsOutbox: await attempt(urls.relay, 'SELECT count(*) FROM temporal_outbox.outbox_events'),
        relayReadsAccounts: await attempt(urls.relay, 'SELECT count(*) FROM accounts'),
        consumerReadsOutbox: await attempt(urls.consumer, 'SELECT count(*) FROM temporal_outbox.outbox_events'),
        consumerReadsInbox: await attempt(urls.consumer, 'SELECT count(*) FROM temporal_outbox.inbox_processed_events'),
        retentionDeletes: await attempt(urls.retention, `DELETE FROM temporal_outbox.outbox_events WHERE published_at < now() - interval '1 day'`),
        retentionCredits: await attempt(urls.retention, 'UPDATE accounts SET balance = 0'),
      },
      { relayReadsOutbox: 'ok', relayReadsAccounts: '42501', consumerReadsOutbox: '42501', consumerReadsInbox: 'ok', retentionDeletes: 'ok', retentionCredits: '42501' },
    );
    // Their roles are the schema's own (migration 0056), not 0041's cluster-wide ones.
    const admin = await socketClient(config, cachePaths(stack.dir));
    try {
      const { rows } = await admin.query<{ login: string; role: string }>(
        `SELECT m.rolname AS login, r.rolname AS role FROM pg_auth_members a JOIN pg_roles m ON m.oid = a.member JOIN pg_roles r ON r.oid = a.roleid
          WHERE m.rolname = ANY($1) ORDER BY 1, 2`,
        [Object.values(LOCAL_PG_WORKER_LOGINS).map((l) => l.user)],
      );
      assert.deepEqual(rows, [
        { login: 'outbox_consumer_worker', role: 'temporal_outbox_consumer' },
        { login: 'outbox_relay_worker', role: 'temporal_outbox_relay' },
        { login: 'outbox_retention_worker', role: 'temporal_outbox_retention' },
      ]);
    } finally {
      await admin.end();
    }
  });

  it('a cluster left on trust by an earlier release keeps running as it is, and gets passwords when the stack restarts it', async () => {
    const paths = cachePaths(stack.dir);
    // What an earlier release left: trust on TCP and an owner without a password.
    const admin = await socketClient(config, paths);
    await admin.query('ALTER ROLE outbox PASSWORD NULL');
    await admin.end();
    fs.writeFileSync(path.join(paths.pgData, 'pg_hba.conf'), 'local all all trust\nhost all all 127.0.0.1/32 trust\n');
    await stopPostgres(paths);
    // Started by hand as the earlier release did, so the stack finds it running and adopts it.
    const pgCtl = ['/usr/lib/postgresql/15/bin/pg_ctl', '-D', paths.pgData, '-w', '-l', path.join(paths.pgData, 'by-hand.log'), '-o', `-p ${config.local.pgPort} -k ${paths.pgSocket} -c listen_addresses=127.0.0.1`, 'start'];
    const [command, ...args] = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...pgCtl] : pgCtl;
    execFileSync(command!, args, { stdio: 'ignore' });
    assert.equal(await connectAs(config, 'outbox', undefined), 'ok', 'the old cluster trusts TCP');

    assert.equal(await ensurePostgres(config, paths, log), false, 'adopted, not restarted');
    assert.equal(await connectAs(config, 'outbox', undefined), 'ok', 'a running cluster keeps its authentication: nobody connected to it is cut off');
    assert.equal(await connectAs(config, 'outbox', passwords.LOCAL_PG_PASSWORD), 'ok', 'and the URLs with passwords work on it too');

    await stopPostgres(paths);
    assert.equal(await ensurePostgres(config, paths, log), true, 'restarted by the stack');
    assert.equal(await connectAs(config, 'outbox', undefined), '28P01', 'now TCP needs the password');
    assert.equal(await connectAs(config, 'outbox', passwords.LOCAL_PG_PASSWORD), 'ok');
    assert.equal(await connectAs(config, config.local.pgLogins().retention.user, config.local.pgLogins().retention.password), 'ok');
  });
});

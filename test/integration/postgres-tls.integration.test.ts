import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadStackConfig, type StackConfig as Config } from '../../tools/local-stack/stack-config';
import { migrate } from '../../src/db/migrate';
import { createPool } from '../../src/db/pool';
import { cachePaths } from '../../tools/local-stack/paths';
import { ensurePostgres, stopPostgres } from '../../tools/local-stack/postgres';
import { socketClient } from '../../tools/local-stack/postgres-auth';
import { enqueue } from '../../src/outbox/enqueue';
import { childEnv, isolatedStack, type IsolatedStack } from '../kit/isolated-stack';

// Managed PostgreSQL (RDS, Cloud SQL, Neon...) is reached over TLS and its certificate checked
// against the provider's CA. Here a PostgreSQL of this test's own serves a certificate signed by
// a CA made with openssl in the test's folder: DATABASE_SSLMODE=verify-full with that CA as
// DATABASE_SSLROOTCERT connects (and the session is encrypted); without the CA, or with a host
// name the certificate does not name, the connection is refused.
describe('PostgreSQL TLS: DATABASE_SSLMODE and DATABASE_SSLROOTCERT', function () {
  this.timeout(120_000);
  let stack: IsolatedStack;
  let local: Config;
  let ca: string;

  before(async () => {
    stack = isolatedStack();
    local = loadStackConfig(childEnv(stack));
    const paths = cachePaths(stack.dir);
    await ensurePostgres(local, paths, () => undefined);
    // A CA and a server certificate for localhost / 127.0.0.1, both made here.
    const tls = path.join(stack.dir, 'tls');
    fs.mkdirSync(tls);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: tls, stdio: 'pipe' });
    openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=outbox test CA', '-keyout', 'ca.key', '-out', 'ca.crt');
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.csr');
    fs.writeFileSync(path.join(tls, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
    openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.crt');
    ca = path.join(tls, 'ca.crt');
    // The server's key must belong to its account and be private to it.
    const serverFiles = path.join(paths.pgData, 'tls');
    fs.mkdirSync(serverFiles);
    for (const f of ['server.crt', 'server.key']) fs.copyFileSync(path.join(tls, f), path.join(serverFiles, f));
    fs.chmodSync(path.join(serverFiles, 'server.key'), 0o600);
    if (process.getuid?.() === 0) execFileSync('chown', ['-R', 'postgres:postgres', serverFiles]);
    // ssl is a reloadable setting: no restart.
    const admin = await socketClient(local, paths);
    try {
      await admin.query(`ALTER SYSTEM SET ssl_cert_file = '${path.join(serverFiles, 'server.crt')}'`);
      await admin.query(`ALTER SYSTEM SET ssl_key_file = '${path.join(serverFiles, 'server.key')}'`);
      await admin.query('ALTER SYSTEM SET ssl = on');
      await admin.query('SELECT pg_reload_conf()');
    } finally {
      await admin.end();
    }
    await migrate(local.database.url);
  });
  after(async () => {
    await stopPostgres(cachePaths(stack.dir)).catch(() => undefined);
    stack.remove();
  });

  /** Connects with the configuration these settings give; the session's TLS state, or the error. */
  async function connectWith(settings: Record<string, string>, host = '127.0.0.1'): Promise<{ ssl?: boolean; error?: string }> {
    const owner = new URL(local.database.url);
    owner.hostname = host;
    const config = loadStackConfig({ ...childEnv(stack), DATABASE_URL: owner.toString(), ...settings });
    const pool = createPool(config.database.url, { max: 1, connectionTimeoutMillis: 5000 });
    try {
      const { rows } = await pool.query<{ ssl: boolean }>('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()');
      // A real write through the encrypted session.
      await enqueue(pool, { eventType: 'payment_confirmed', payload: { event_id: `tls-${Date.now()}-${Math.random()}`, type: 'payment_confirmed', account_id: 1, amount: 1 } });
      return { ssl: rows[0]!.ssl };
    } catch (err) {
      return { error: (err as Error).message };
    } finally {
      await pool.end().catch(() => undefined);
    }
  }

  it('without sslmode the session is not encrypted (the check below can tell)', async () => {
    assert.deepEqual(await connectWith({}), { ssl: false });
  });

  it('verify-full with the CA connects, encrypted, by IP and by host name', async () => {
    assert.deepEqual(await connectWith({ DATABASE_SSLMODE: 'verify-full', DATABASE_SSLROOTCERT: ca }), { ssl: true });
    assert.deepEqual(await connectWith({ DATABASE_SSLMODE: 'verify-full', DATABASE_SSLROOTCERT: ca }, 'localhost'), { ssl: true });
  });

  it('verify-full without the CA is refused: the certificate is not trusted', async () => {
    const { error } = await connectWith({ DATABASE_SSLMODE: 'verify-full' });
    assert.match(error ?? 'connected', /self[- ]signed certificate|unable to (get|verify)/i);
  });

  it('require encrypts without checking the certificate (libpq\'s meaning), as its name says', async () => {
    assert.deepEqual(await connectWith({ DATABASE_SSLMODE: 'require' }), { ssl: true });
  });
});

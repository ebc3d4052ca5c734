import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// Passwords of the local stack's PostgreSQL: the `outbox` superuser (migrations, setup, tools)
// and one login per worker, each holding only its component's role of the library's schema
// (migrations/0056: `<schema>_relay`, ...; postgres-auth.ts). Each comes
// from its environment variable, else from a file in the cache folder, generated once (random,
// mode 0600) by whoever needs it first. Nothing here is ever logged or put on a command line.

export const LOCAL_PG_OWNER = 'outbox';

/** Login user of each worker on the local stack, and the component whose role it is granted. */
export const LOCAL_PG_WORKER_LOGINS = {
  relay: { user: 'outbox_relay_worker', component: 'relay' },
  consumer: { user: 'outbox_consumer_worker', component: 'consumer' },
  retention: { user: 'outbox_retention_worker', component: 'retention' },
} as const;
export type WorkerComponent = keyof typeof LOCAL_PG_WORKER_LOGINS;

export interface LocalPgLogin {
  user: string;
  password: string;
}
export type LocalPgCredentials = { owner: LocalPgLogin } & Record<WorkerComponent, LocalPgLogin>;

/** The environment variables that override a generated password, by login. */
export const LOCAL_PG_PASSWORD_VARIABLES = {
  owner: 'LOCAL_PG_PASSWORD',
  relay: 'LOCAL_PG_RELAY_PASSWORD',
  consumer: 'LOCAL_PG_CONSUMER_PASSWORD',
  retention: 'LOCAL_PG_RETENTION_PASSWORD',
} as const;

export function credentialsDir(cacheDir: string): string {
  return path.join(cacheDir, 'postgres', 'credentials');
}

export function localPgCredentials(cacheDir: string, overrides: Partial<Record<keyof typeof LOCAL_PG_PASSWORD_VARIABLES, string>> = {}): LocalPgCredentials {
  const login = (who: keyof typeof LOCAL_PG_PASSWORD_VARIABLES, user: string): LocalPgLogin => ({ user, password: overrides[who] ?? storedPassword(cacheDir, user) });
  return {
    owner: login('owner', LOCAL_PG_OWNER),
    relay: login('relay', LOCAL_PG_WORKER_LOGINS.relay.user),
    consumer: login('consumer', LOCAL_PG_WORKER_LOGINS.consumer.user),
    retention: login('retention', LOCAL_PG_WORKER_LOGINS.retention.user),
  };
}

/** `postgres://user:password@127.0.0.1:port/database`, the password URL-encoded. */
export function localPgUrl(login: LocalPgLogin, port: number, database = 'outbox'): string {
  return `postgres://${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}@127.0.0.1:${port}/${database}`;
}

function storedPassword(cacheDir: string, user: string): string {
  const dir = credentialsDir(cacheDir);
  const file = path.join(dir, user);
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // Only the credentials folder is private: a recursive mkdir would give its mode to every
  // parent it creates too (the cache folder itself), and the PostgreSQL service account must
  // still reach its data folder beside it.
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    // 'wx': when two processes race to create it, one writes and both read the same password.
    fs.writeFileSync(file, `${crypto.randomBytes(24).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return fs.readFileSync(file, 'utf8').trim();
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802/7677, the form
 * `ALTER ROLE ... PASSWORD 'SCRAM-SHA-256$...'` accepts as already hashed). Computed here so the
 * plain password never travels to the server, where a failed statement would be logged whole.
 * Passwords are taken as given (no SASLprep): generated ones are ASCII.
 */
export function scramSha256Verifier(password: string, salt = crypto.randomBytes(16), iterations = 4096): string {
  const salted = crypto.pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => crypto.createHmac('sha256', key).update(text).digest();
  const storedKey = crypto.createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

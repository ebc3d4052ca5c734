import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import type { StackConfig as Config } from './stack-config';
import { LOCAL_PG_OWNER, LOCAL_PG_WORKER_LOGINS, scramSha256Verifier, type LocalPgLogin } from './local-credentials';
import type { CachePaths } from './paths';
import { DEFAULT_SCHEMA, validateSchemaName } from '../../src/db/schema';

// Password authentication for the local cluster. TCP connections (everything the project and its
// tests open) need a SCRAM-SHA-256 password; the Unix socket, in a folder only the server's
// account can enter, stays the administrator's way in, which is how the stack sets passwords on
// a cluster that has none yet (a new one, or one initialised by an earlier release with trust).

const HBA = [
  '# Written by the project\'s local stack at every start of this cluster (tools/local-stack/postgres-auth.ts).',
  '# The Unix socket lives in a folder only the server\'s account can enter; TCP needs a password.',
  'local   all          all                    trust',
  'host    all          all    127.0.0.1/32    scram-sha-256',
  'host    all          all    ::1/128         scram-sha-256',
  'host    replication  all    127.0.0.1/32    scram-sha-256',
  '',
].join('\n');

/** Before the postmaster starts: pg_hba.conf as above, the socket folder closed to others. */
export function prepareAuthentication(paths: CachePaths): void {
  fs.writeFileSync(path.join(paths.pgData, 'pg_hba.conf'), HBA, { mode: 0o600 });
  fs.mkdirSync(paths.pgSocket, { recursive: true });
  fs.chmodSync(paths.pgSocket, 0o700);
}

/** Connects through the Unix socket as the owner (no password: see above). */
export async function socketClient(config: Config, paths: CachePaths, database = 'postgres'): Promise<Client> {
  const client = new Client({ host: paths.pgSocket, port: config.local.pgPort, user: LOCAL_PG_OWNER, database, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return client;
}

/**
 * The owner's password, and one login per worker holding its component's role of the library's
 * schema (`<schema>_relay`, ...), each with the password from the environment or the cache folder.
 * Idempotent: a password already right is left alone. The component roles are created here when
 * missing, with the comment migration 0056 gives its own (0056 accepts a role of that name only
 * with that comment), so a worker login exists before the first migration; their grants come with
 * the migrations. 0041's cluster-wide roles (`outbox_relay`, ...), which logins of earlier
 * releases of the stack held, are revoked: a worker must work with its schema's role alone.
 */
export async function ensureLocalLogins(config: Config, paths: CachePaths): Promise<void> {
  const logins = config.local.pgLogins();
  const schema = validateSchemaName(process.env.OUTBOX_SCHEMA || DEFAULT_SCHEMA);
  const client = await socketClient(config, paths);
  try {
    await setPassword(client, logins.owner);
    for (const [who, { user, component }] of Object.entries(LOCAL_PG_WORKER_LOGINS) as [keyof typeof LOCAL_PG_WORKER_LOGINS, (typeof LOCAL_PG_WORKER_LOGINS)[keyof typeof LOCAL_PG_WORKER_LOGINS]][]) {
      const role = `${schema}_${component}`;
      if (await createRoleIfMissing(client, role, 'NOLOGIN')) {
        await execute(client, 'COMMENT ON ROLE %I IS %L', [role, `temporal-outbox: the ${component} role of schema ${schema}`]);
      }
      await createRoleIfMissing(client, user, 'LOGIN');
      await setPassword(client, { user, password: logins[who].password });
      await execute(client, 'GRANT %I TO %I', [role, user]);
      await revokeIfHeld(client, `outbox_${component}`, user);
    }
  } finally {
    await client.end();
  }
}

/** True when this call created the role. */
async function createRoleIfMissing(client: Client, role: string, kind: 'LOGIN' | 'NOLOGIN'): Promise<boolean> {
  const { rowCount } = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
  if (rowCount) return false;
  return execute(client, `CREATE ROLE %I ${kind}`, [role]).then(
    () => true,
    (err: { code?: string }) => {
      if (err.code !== '42710' && err.code !== '23505') throw err; // created concurrently by another start
      return false;
    },
  );
}

async function revokeIfHeld(client: Client, role: string, user: string) {
  const { rowCount } = await client.query('SELECT 1 FROM pg_auth_members WHERE roleid = (SELECT oid FROM pg_roles WHERE rolname = $1) AND member = (SELECT oid FROM pg_roles WHERE rolname = $2)', [role, user]);
  if (rowCount) await execute(client, 'REVOKE %I FROM %I', [role, user]);
}

async function setPassword(client: Client, login: LocalPgLogin) {
  const { rows } = await client.query<{ rolpassword: string | null }>('SELECT rolpassword FROM pg_authid WHERE rolname = $1', [login.user]);
  if (rows[0]?.rolpassword && verifierMatches(login.password, rows[0].rolpassword)) return;
  // The verifier, not the password, is what reaches the server (tools/local-stack/local-credentials.ts).
  await execute(client, 'ALTER ROLE %I PASSWORD %L', [login.user, scramSha256Verifier(login.password)]);
}

/** Utility statements take no bind parameters: the server quotes them itself (format %I/%L), then runs the result. */
export async function execute(client: Client, template: string, values: string[]) {
  const { rows } = await client.query<{ sql: string }>(`SELECT format($1, ${values.map((_, i) => `$${i + 2}::text`).join(', ')}) AS sql`, [template, ...values]);
  await client.query(rows[0]!.sql);
}

/** True when `verifier` (SCRAM-SHA-256$iter:salt$stored:server) was made from `password`. */
export function verifierMatches(password: string, verifier: string): boolean {
  const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(verifier);
  if (!m) return false;
  const expected = scramSha256Verifier(password, Buffer.from(m[2]!, 'base64'), Number(m[1]));
  return expected.length === verifier.length && crypto.timingSafeEqual(Buffer.from(expected), Buffer.from(verifier));
}

export { LOCAL_PG_OWNER };

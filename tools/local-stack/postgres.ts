import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import type { StackConfig as Config } from './stack-config';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { ensureLocalLogins, LOCAL_PG_OWNER, prepareAuthentication, socketClient } from './postgres-auth';
import { isAlive, pidFile, runningPid, startDaemon, stopDaemon, waitUntil } from './processes';

// A project-local PostgreSQL 15 cluster from the machine's server binaries. Settings favour a
// busy outbox on a small machine: enough connections for several workers, room for WAL bursts.
// They are passed on the command line at every start, so a change here reaches existing clusters
// at their next start, not only new ones.
const SERVER_SETTINGS = [
  'listen_addresses=127.0.0.1',
  // Logical decoding, so the peer benchmark can run pg-transactional-outbox's logical-replication
  // listener on this cluster (tools/bench/peer.bench.ts); it adds little WAL to what `replica` writes.
  'wal_level=logical',
  'max_connections=200',
  // Two-phase commit exists in the wild (XA coordinators); the doctor's vacuum-horizon check is
  // tested against a prepared transaction. Passed with -c, so it applies to a cluster initialised
  // before this line at its next start too.
  'max_prepared_transactions=10',
  'shared_buffers=512MB',
  'max_wal_size=4GB',
  'checkpoint_timeout=15min',
  // Dead clients (docs/managed-services.md#dead-connections): a peer that stopped answering is
  // noticed after 10 s idle + 3 probes 5 s apart = 25 s and its backend ends, releasing its
  // session locks; a client gone during a long query is noticed every 5 s; a transaction left
  // idle (a client that died between statements) ends after 10 minutes.
  'tcp_keepalives_idle=10',
  'tcp_keepalives_interval=5',
  'tcp_keepalives_count=3',
  'client_connection_check_interval=5s',
  'idle_in_transaction_session_timeout=10min',
  'log_min_messages=warning',
  'log_line_prefix=%m [%p] %d ',
];

export const PG_SERVICE = 'postgres';

export function findBinaries(): string {
  const candidates = [process.env.PG_BIN, '/usr/lib/postgresql/15/bin'].filter((p): p is string => Boolean(p));
  for (const dir of candidates) if (fs.existsSync(path.join(dir, 'postgres'))) return dir;
  throw new StackError(
    'PostgreSQL 15 server binaries were not found in /usr/lib/postgresql/15/bin: install them with `apt-get install postgresql-15` or set DATABASE_URL to your own server',
  );
}

/** PostgreSQL will not run as root; as root we run it as the `postgres` account the Debian package creates. */
export function serviceAccount(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    return { uid, gid };
  } catch {
    throw new StackError('running as root needs the `postgres` OS account to run PostgreSQL: install the `postgresql` package or run as a normal user');
  }
}

function chownTree(dir: string, account: { uid: number; gid: number } | undefined) {
  if (!account) return;
  execFileSync('chown', ['-R', `${account.uid}:${account.gid}`, dir]);
}

export async function pgStatus(config: Config, paths: CachePaths): Promise<{ pid?: number; listening: boolean }> {
  return { pid: runningPid(paths.run, PG_SERVICE), listening: await isListening(config.local.pgPort) };
}

/** Starts the local cluster unless it already runs; returns true when this call started it. */
export async function ensurePostgres(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const port = config.local.pgPort;
  const account = serviceAccount();
  let pid = runningPid(paths.run, PG_SERVICE) ?? adoptLeftoverPostmaster(paths);
  if (pid !== undefined) {
    // A running cluster keeps the authentication it was started with (a cluster of an earlier
    // release may still trust TCP); its logins and passwords are brought in line all the same.
    await waitUntil(`PostgreSQL on port ${port}`, () => canConnectBySocket(config, paths), { timeoutMs: 30_000, pid });
    await ensureLocalLogins(config, paths);
    await waitUntil(`PostgreSQL on port ${port}`, () => canConnect(config, 'postgres'), { timeoutMs: 30_000, pid });
    await ensureDatabase(config);
    return false;
  }
  if (await isListening(port)) {
    throw new StackError(`port ${port} is taken by a process that is not this project's PostgreSQL: stop it, or set LOCAL_PG_PORT to a free port, or DATABASE_URL to use that server`);
  }
  const bin = findBinaries();
  initCluster(bin, paths, account, log);
  prepareAuthentication(paths);
  chownTree(path.dirname(paths.pgData), account);
  const logFile = path.join(paths.logs, 'postgres.log');
  const args = ['-D', paths.pgData, '-p', String(port), '-k', paths.pgSocket, ...SERVER_SETTINGS.flatMap((s) => ['-c', s])];
  pid = startDaemon({ name: PG_SERVICE, command: path.join(bin, 'postgres'), args, runDir: paths.run, logFile, ...account });
  log(`PostgreSQL starting on 127.0.0.1:${port} (log: ${logFile})`);
  await waitUntil(`PostgreSQL to start on port ${port}`, () => canConnectBySocket(config, paths), { timeoutMs: 60_000, pid, logFile });
  await ensureLocalLogins(config, paths);
  await waitUntil(`PostgreSQL to accept password logins on port ${port}`, () => canConnect(config, 'postgres'), { timeoutMs: 30_000, pid, logFile });
  await ensureDatabase(config);
  return true;
}

export async function stopPostgres(paths: CachePaths): Promise<boolean> {
  // SIGTERM is PostgreSQL's "smart" shutdown; SIGINT ("fast") disconnects clients so `down` cannot hang on an idle pool.
  const pid = runningPid(paths.run, PG_SERVICE);
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      /* gone */
    }
  }
  return stopDaemon(paths.run, PG_SERVICE, 30_000);
}

function initCluster(bin: string, paths: CachePaths, account: { uid: number; gid: number } | undefined, log: (m: string) => void) {
  if (fs.existsSync(path.join(paths.pgData, 'PG_VERSION'))) return;
  if (fs.existsSync(paths.pgData) && fs.readdirSync(paths.pgData).length > 0) {
    log(`PostgreSQL data folder ${paths.pgData} was left half-initialised by an earlier run: removing it and starting over`);
  }
  fs.rmSync(paths.pgData, { recursive: true, force: true });
  fs.mkdirSync(paths.pgData, { recursive: true });
  chownTree(path.dirname(paths.pgData), account);
  log(`initialising a PostgreSQL cluster in ${paths.pgData}`);
  try {
    // Passwords over TCP, the socket for the stack itself (tools/local-stack/postgres-auth.ts, which also
    // rewrites pg_hba.conf at every start, so clusters initialised with trust get passwords too).
    execFileSync(path.join(bin, 'initdb'), ['-D', paths.pgData, '-U', LOCAL_PG_OWNER, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...account,
    });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new StackError(`initdb failed: ${stderr.trim().split('\n').pop() ?? String(err)}`);
  }
}

/** A postmaster from an earlier run (our PID file lost) is reused rather than fought over. */
function adoptLeftoverPostmaster(paths: CachePaths): number | undefined {
  try {
    const pid = Number(fs.readFileSync(path.join(paths.pgData, 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
      fs.mkdirSync(paths.run, { recursive: true });
      fs.writeFileSync(pidFile(paths.run, PG_SERVICE), `${pid}\n`);
      return pid;
    }
  } catch {
    /* no leftover */
  }
  return undefined;
}

async function canConnectBySocket(config: Config, paths: CachePaths): Promise<boolean> {
  const client = await socketClient(config, paths);
  await client.end();
  return true;
}

/** The owner's login over TCP, as every client of the stack connects. */
function ownerClient(config: Config, database: string): Client {
  const { owner } = config.local.pgLogins();
  return new Client({ host: '127.0.0.1', port: config.local.pgPort, user: owner.user, password: owner.password, database, connectionTimeoutMillis: 2000 });
}

async function canConnect(config: Config, database: string): Promise<boolean> {
  const client = ownerClient(config, database);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function ensureDatabase(config: Config) {
  const client = ownerClient(config, 'postgres');
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', ['outbox']);
    if (rowCount === 0) await client.query('create database outbox').catch((err: { code?: string }) => {
      if (err.code !== '42P04') throw err; // created concurrently by another `up`
    });
  } finally {
    await client.end();
  }
}

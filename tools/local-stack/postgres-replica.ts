import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import type { StackConfig as Config } from './stack-config';
import { StackError } from './errors';
import { LOCAL_PG_OWNER } from './local-credentials';
import type { CachePaths } from './paths';
import { findBinaries, PG_SERVICE, serviceAccount } from './postgres';
import { execute, socketClient } from './postgres-auth';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';

// A streaming replica of the local cluster, for failover tests: a copy made with pg_basebackup
// that follows the primary's WAL, can be made the synchronous standby, cut off from the primary
// (its WAL no longer shipped) and promoted. A managed service does the same behind its endpoint.

export interface ReplicaSpec {
  /** Folder of its own (data, socket, log, PID file); removed and made again by createReplica. */
  dir: string;
  port: number;
  /** Its application_name on the primary: what synchronous_standby_names names. */
  name: string;
}

export interface Replica extends ReplicaSpec {
  dataDir: string;
  socketDir: string;
  logFile: string;
  /** An administrator's session over the replica's own socket. */
  client(database?: string): Promise<Client>;
  /** The replica's owner URL over TCP (the primary's owner, copied with the data). */
  url(database?: string): string;
}

const DAEMON = 'postgres-replica';
// Settings of the primary's own command line that belong to the primary's address, not to a copy.
const NOT_COPIED = ['port', 'unix_socket_directories', 'data_directory', 'config_file', 'hba_file', 'ident_file'];

/**
 * Copies the running local cluster with pg_basebackup (WAL streamed with the copy, so it is
 * consistent on its own) and starts the copy as a hot standby on `spec.port`, streaming from the
 * primary under `spec.name`. The copy runs with the primary's command-line settings (a standby
 * needs max_connections, max_prepared_transactions and the like at least as high as its primary's).
 */
export async function createReplica(config: Config, paths: CachePaths, spec: ReplicaSpec, log: (m: string) => void): Promise<Replica> {
  const bin = findBinaries();
  const account = serviceAccount();
  const replica = describe(config, spec);
  fs.rmSync(spec.dir, { recursive: true, force: true });
  fs.mkdirSync(replica.socketDir, { recursive: true });
  fs.chmodSync(spec.dir, 0o755);
  fs.chmodSync(replica.socketDir, 0o700);
  if (account) execFileSync('chown', ['-R', `${account.uid}:${account.gid}`, spec.dir]);

  const settings = await primaryCommandLine(config, paths);
  const { owner } = config.local.pgLogins();
  log(`copying the primary on port ${config.local.pgPort} into ${replica.dataDir}`);
  try {
    // Over TCP with the owner's password: the socket's trust line does not cover replication.
    execFileSync(path.join(bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(config.local.pgPort), '-U', owner.user, '-D', replica.dataDir, '-X', 'stream', '-c', 'fast', '--no-sync'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PGPASSWORD: owner.password },
      ...account,
    });
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new StackError(`pg_basebackup failed: ${stderr.trim() || String(err)}`);
  }
  // primary_conninfo goes to postgresql.auto.conf, not the command line, so ALTER SYSTEM can
  // later take it away (stopWalShipping): a setting given with -c would win over that file.
  const conninfo = `host=127.0.0.1 port=${config.local.pgPort} user=${owner.user} password=${owner.password} application_name=${spec.name}`;
  fs.appendFileSync(path.join(replica.dataDir, 'postgresql.auto.conf'), `primary_conninfo = '${conninfo.replace(/'/g, "''")}'\n`);
  fs.writeFileSync(path.join(replica.dataDir, 'standby.signal'), '');
  if (account) execFileSync('chown', ['-R', `${account.uid}:${account.gid}`, spec.dir]);

  const args = [
    '-D', replica.dataDir, '-p', String(spec.port), '-k', replica.socketDir,
    ...settings.flatMap((s) => ['-c', s]),
    // Promoted, the copy must not wait for a standby of its own: the primary's
    // synchronous_standby_names (ALTER SYSTEM, copied with the data) names the copy itself.
    '-c', 'synchronous_standby_names=',
  ];
  const pid = startDaemon({ name: DAEMON, command: path.join(bin, 'postgres'), args, runDir: path.join(spec.dir, 'run'), logFile: replica.logFile, ...account });
  log(`replica starting on 127.0.0.1:${spec.port} (log: ${replica.logFile})`);
  await waitUntil(`the replica to accept connections on port ${spec.port}`, async () => (await adminQuery(replica, 'SELECT pg_is_in_recovery() AS r'))[0]?.r === true, {
    timeoutMs: 60_000,
    pid,
    logFile: replica.logFile,
  });
  return replica;
}

function describe(config: Config, spec: ReplicaSpec): Replica {
  const dataDir = path.join(spec.dir, 'data');
  const socketDir = path.join(spec.dir, 'socket');
  const { owner } = config.local.pgLogins();
  return {
    ...spec,
    dataDir,
    socketDir,
    logFile: path.join(spec.dir, 'postgres.log'),
    async client(database = 'postgres') {
      const client = new Client({ host: socketDir, port: spec.port, user: LOCAL_PG_OWNER, database, connectionTimeoutMillis: 2000 });
      await client.connect();
      return client;
    },
    url(database = 'outbox') {
      return `postgres://${encodeURIComponent(owner.user)}:${encodeURIComponent(owner.password)}@127.0.0.1:${spec.port}/${database}`;
    },
  };
}

async function primaryCommandLine(config: Config, paths: CachePaths): Promise<string[]> {
  const rows = await withPrimary(config, paths, async (c) =>
    (await c.query<{ name: string; setting: string }>(`SELECT name, setting FROM pg_settings WHERE source = 'command line' AND NOT name = ANY($1::text[])`, [NOT_COPIED])).rows,
  );
  return rows.map((r) => `${r.name}=${r.setting}`);
}

async function withPrimary<T>(config: Config, paths: CachePaths, work: (c: Client) => Promise<T>): Promise<T> {
  const client = await socketClient(config, paths);
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function adminQuery(replica: Replica, sql: string, values: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = await replica.client();
  try {
    return (await client.query(sql, values)).rows as Record<string, unknown>[];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Makes the replica the primary's synchronous standby (synchronous_commit stays at its default,
 * on: a COMMIT returns once the standby has flushed its WAL) or, with `false`, an asynchronous
 * one; waits until the primary reports it streaming in that mode.
 */
export async function setSynchronousStandby(config: Config, paths: CachePaths, replica: Replica, synchronous: boolean): Promise<void> {
  await withPrimary(config, paths, async (c) => {
    await execute(c, 'ALTER SYSTEM SET synchronous_standby_names = %L', [synchronous ? replica.name : '']);
    await c.query('SELECT pg_reload_conf()');
  });
  const wanted = synchronous ? 'sync' : 'async';
  await waitUntil(`the replica streaming as the ${wanted} standby`, () =>
    withPrimary(config, paths, async (c) => {
      const { rows } = await c.query<{ sync_state: string; state: string }>('SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1', [replica.name]);
      return rows[0]?.state === 'streaming' && rows[0].sync_state === wanted;
    }), { timeoutMs: 30_000 });
}

/** Waits until the replica has replayed everything the primary has written so far. */
export async function waitForReplay(config: Config, paths: CachePaths, replica: Replica, timeoutMs = 30_000): Promise<void> {
  const target = await withPrimary(config, paths, async (c) => (await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0]!.lsn);
  await waitUntil(`the replica to replay up to ${target}`, async () => (await adminQuery(replica, 'SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [target]))[0]?.done === true, { timeoutMs });
}

/**
 * Stops WAL shipping, as a lagging or partitioned standby looks: the replica forgets its
 * primary_conninfo, so its WAL receiver stops and is not started again. From here on, what the
 * primary commits never reaches the replica.
 */
export async function stopWalShipping(replica: Replica): Promise<void> {
  await adminQuery(replica, `ALTER SYSTEM SET primary_conninfo = ''`);
  await adminQuery(replica, 'SELECT pg_reload_conf()');
  await waitUntil('the replica\'s WAL receiver to stop', async () => (await adminQuery(replica, 'SELECT count(*)::int AS n FROM pg_stat_wal_receiver'))[0]?.n === 0, { timeoutMs: 30_000 });
}

/** Promotes the replica and waits until it takes writes. */
export async function promoteReplica(replica: Replica): Promise<void> {
  await adminQuery(replica, 'SELECT pg_promote(true, 60)');
  await waitUntil('the promoted replica to leave recovery', async () => (await adminQuery(replica, 'SELECT pg_is_in_recovery() AS r'))[0]?.r === false, { timeoutMs: 60_000 });
}

/**
 * The primary's sudden end: SIGKILL to its whole process group (postmaster and backends), as a
 * failed host looks; nothing is flushed or said to clients. It stays down (fenced).
 */
export function killPrimary(paths: CachePaths): void {
  const pid = runningPid(paths.run, PG_SERVICE);
  if (pid === undefined) throw new StackError('the primary is not running: nothing to kill');
  process.kill(-pid, 'SIGKILL');
}

export async function stopReplica(replica: ReplicaSpec): Promise<void> {
  const runDir = path.join(replica.dir, 'run');
  const pid = runningPid(runDir, DAEMON);
  if (pid !== undefined) {
    try {
      process.kill(pid, 'SIGINT');
    } catch {
      /* gone */
    }
  }
  await stopDaemon(runDir, DAEMON, 30_000);
}

import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { StackConfig as Config } from './stack-config';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { TEMPORAL_SERVICE } from './temporal';
import { ensureTemporalServerBinaries } from './temporal-server/build';
import { ensureNamespace } from './temporal-server/namespace';
import { ensureTemporalSchemas, type DatabaseAccess } from './temporal-server/schema';
import { allPorts, HISTORY_SHARDS, temporalServerConfig, temporalServerPorts } from './temporal-server/server-config';

// TEMPORAL_SERVER=postgres: Temporal's own server (frontend, history, matching and worker services
// in one process) on the stack's PostgreSQL, with several history shards and SQL visibility, the
// shape a production cluster has, instead of the dev server's single-shard SQLite file.

export const TEMPORAL_SERVER_SERVICE = 'temporal-server';

export function temporalServerFiles(paths: CachePaths) {
  const dir = path.join(paths.root, 'temporal-server');
  return { dir, config: path.join(dir, 'config.yaml'), dynamicConfig: path.join(dir, 'dynamic-config.yaml'), log: path.join(paths.logs, 'temporal-server.log') };
}

export async function temporalServerStatus(config: Config, paths: CachePaths) {
  return { pid: runningPid(paths.run, TEMPORAL_SERVER_SERVICE), listening: await isListening(config.local.temporalPort) };
}

/** Starts the server unless it already runs; returns true when this call started it. */
export async function ensureTemporalServer(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const address = `127.0.0.1:${config.local.temporalPort}`;
  let pid = runningPid(paths.run, TEMPORAL_SERVER_SERVICE);
  if (pid !== undefined) {
    await waitUntil(`Temporal's server on ${address}`, () => serverAnswers(address), { timeoutMs: 60_000, pid });
    await prepareNamespace(address, config.temporal.namespace);
    return false;
  }
  const access = localDatabaseAccess(config);
  await refuseTakenPorts(config, paths);
  const binaries = ensureTemporalServerBinaries(paths, log);
  await ensureTemporalSchemas(binaries.sqlTool, access, log);
  const files = writeServerConfig(config, paths, access);
  pid = startDaemon({
    name: TEMPORAL_SERVER_SERVICE,
    command: binaries.server,
    args: ['--config-file', files.config, '--allow-no-auth', 'start'],
    runDir: paths.run,
    logFile: files.log,
  });
  log(`Temporal's server (PostgreSQL, ${HISTORY_SHARDS} history shards, SQL visibility) starting on ${address}; no Web UI in this mode (log: ${files.log})`);
  await waitUntil(`Temporal's server on ${address}`, () => serverAnswers(address), { timeoutMs: 120_000, pid, logFile: files.log });
  await prepareNamespace(address, config.temporal.namespace);
  return true;
}

export function stopTemporalServer(paths: CachePaths): Promise<boolean> {
  return stopDaemon(paths.run, TEMPORAL_SERVER_SERVICE, 20_000);
}

/** The server's databases live on the stack's own PostgreSQL; a user's server is theirs to set up. */
export function localDatabaseAccess(config: Config): DatabaseAccess {
  if (!config.database.local) {
    throw new StackError(
      `TEMPORAL_SERVER=${config.temporal.server} runs Temporal on the local stack's PostgreSQL, and DATABASE_URL points at your own: unset DATABASE_URL, or run Temporal beside your database yourself and set TEMPORAL_ADDRESS`,
    );
  }
  const url = new URL(config.database.url);
  return { host: url.hostname, port: Number(url.port), user: decodeURIComponent(url.username), password: url.password ? decodeURIComponent(url.password) : undefined };
}

async function refuseTakenPorts(config: Config, paths: CachePaths) {
  const port = config.local.temporalPort;
  if (runningPid(paths.run, TEMPORAL_SERVICE) !== undefined) {
    throw new StackError(`this stack's Temporal dev server is running on port ${port}: stop it first (\`npm run stack:down\`), then start the stack again with TEMPORAL_SERVER=postgres`);
  }
  const ports = allPorts(temporalServerPorts(port));
  if (Math.min(...ports) < 1024 || Math.max(...ports) > 65_535) {
    throw new StackError(`LOCAL_TEMPORAL_PORT=${port}: Temporal's server also binds ports ${Math.min(...ports)}–${Math.max(...ports)} (docs/temporal-server.md); choose a port between 1324 and 65525`);
  }
  for (const p of ports) {
    if (await isListening(p)) {
      throw new StackError(`port ${p}, one of the ports Temporal's server binds around LOCAL_TEMPORAL_PORT=${port} (${ports.join(', ')}), is taken: stop what holds it, or set LOCAL_TEMPORAL_PORT elsewhere`);
    }
  }
}

/** Rewritten on every start from the settings; the dynamic config file is the user's to edit, so only created once. */
function writeServerConfig(config: Config, paths: CachePaths, access: DatabaseAccess) {
  const files = temporalServerFiles(paths);
  fs.mkdirSync(files.dir, { recursive: true });
  if (!fs.existsSync(files.dynamicConfig)) {
    fs.writeFileSync(files.dynamicConfig, '# Temporal dynamic config overrides (key: [{value: ...}]), re-read every 10 s.\n{}\n');
  }
  const serverConfig = temporalServerConfig({ frontendPort: config.local.temporalPort, database: access, dynamicConfigFile: files.dynamicConfig });
  // 0600: the file holds the database password when there is one.
  fs.writeFileSync(files.config, `${JSON.stringify(serverConfig, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(files.config, 0o600);
  return files;
}

export async function prepareNamespace(address: string, namespace: string) {
  const connection = await Connection.connect({ address, connectTimeout: 5000 });
  try {
    await ensureNamespace(connection, namespace);
    // A new namespace reaches every service's cache within seconds (system.namespaceCacheRefreshInterval).
    await waitUntil(`the ${namespace} namespace to accept search attributes`, async () => (await ensureSearchAttributes(connection, namespace), true), { timeoutMs: 30_000 });
  } finally {
    await connection.close();
  }
}

/** `temporal-system` exists on every cluster once the frontend serves requests. */
export async function serverAnswers(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    await connection.workflowService.describeNamespace({ namespace: 'temporal-system' });
    return true;
  } finally {
    await connection.close();
  }
}

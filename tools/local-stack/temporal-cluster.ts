import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import type { StackConfig as Config } from './stack-config';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { isAlive, runningPid, sleep, startDaemon, stopDaemon, tailOf, waitUntil } from './processes';
import { TEMPORAL_SERVICE } from './temporal';
import { localDatabaseAccess, prepareNamespace, serverAnswers, TEMPORAL_SERVER_SERVICE } from './temporal-server';
import { ensureTemporalServerBinaries } from './temporal-server/build';
import { ensureTemporalSchemas, type DatabaseAccess } from './temporal-server/schema';
import { temporalServerConfig } from './temporal-server/server-config';
import { CLUSTER_DATABASES, CLUSTER_HISTORY_SHARDS, clusterHosts, clusterPorts, frontendHosts, type ClusterHost } from './temporal-cluster/layout';
import { ensureUiServerBinary, UI_SERVER_ENV, uiServerConfig } from './temporal-cluster/ui-server';

// TEMPORAL_SERVER=cluster: the services of Temporal's server as separate processes
// (temporal-cluster/layout.ts), a TCP balancer in front of the two frontends at
// LOCAL_TEMPORAL_PORT, and the Web UI at LOCAL_TEMPORAL_UI_PORT. Each is a daemon of its own
// (PID file, log file), so one can be stopped, killed and started again while the rest run.

const PREFIX = 'temporal-cluster-';
export const BALANCER = 'balancer';
export const UI = 'ui';

export function clusterDaemonName(part: string): string {
  return `${PREFIX}${part}`;
}

export function temporalClusterFiles(paths: CachePaths) {
  const dir = path.join(paths.root, 'temporal-cluster');
  return {
    dir,
    config: (host: string) => path.join(dir, `${host}.yaml`),
    dynamicConfig: path.join(dir, 'dynamic-config.yaml'),
    uiDir: path.join(dir, 'ui'),
    log: (part: string) => path.join(paths.logs, `${clusterDaemonName(part)}.log`),
  };
}

/** Every part of the cluster, in the order it starts: history first, so shards have owners when the frontends open. */
export function clusterParts(config: Config): string[] {
  return [...clusterHosts(config.local.temporalPort).map((h) => h.name), BALANCER, UI];
}

export async function temporalClusterStatus(config: Config, paths: CachePaths) {
  const parts = clusterParts(config).map((name) => ({ name, pid: runningPid(paths.run, clusterDaemonName(name)) }));
  return { pid: runningPid(paths.run, clusterDaemonName(BALANCER)), listening: await isListening(config.local.temporalPort), parts };
}

/** Starts every part of the cluster that does not run; returns true when this call started any. */
export async function ensureTemporalCluster(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const address = `127.0.0.1:${config.local.temporalPort}`;
  const missing = clusterParts(config).filter((name) => runningPid(paths.run, clusterDaemonName(name)) === undefined);
  if (missing.length === 0) {
    await waitUntil(`Temporal's cluster on ${address}`, () => serverAnswers(address), { timeoutMs: 60_000 });
    await prepareNamespace(address, config.temporal.namespace);
    return false;
  }
  const access = localDatabaseAccess(config);
  await refuseOtherTemporal(config, paths, missing);
  const binaries = ensureTemporalServerBinaries(paths, log);
  await ensureTemporalSchemas(binaries.sqlTool, access, log, CLUSTER_DATABASES);
  const files = writeHostConfigs(config, paths, access);
  const hosts = clusterHosts(config.local.temporalPort);
  const start = (host: ClusterHost) => ({
    host,
    pid: startDaemon({
      name: clusterDaemonName(host.name),
      command: binaries.server,
      args: ['--config-file', files.config(host.name), '--allow-no-auth', 'start', '--service', host.service],
      runDir: paths.run,
      logFile: files.log(host.name),
    }),
  });
  const [first, ...rest] = hosts.filter((h) => missing.includes(h.name));
  const started = [];
  if (first) {
    // One process first: on a fresh database every process would write the cluster's metadata at
    // once, and all but one would exit on the version conflict.
    started.push(start(first));
    await waitUntil(`${first.name} of Temporal's cluster on port ${first.ports.grpc}`, () => isListening(first.ports.grpc), { timeoutMs: 120_000, pid: started[0]!.pid, logFile: files.log(first.name) });
  }
  started.push(...rest.map(start));
  if (missing.includes(BALANCER)) startBalancerDaemon(config, paths);
  log(
    started.length === hosts.length
      ? `Temporal's cluster starting: ${hosts.map((h) => `${h.name} :${h.ports.grpc}`).join(', ')}, ${CLUSTER_HISTORY_SHARDS} history shards on PostgreSQL with SQL visibility, frontends behind ${address} (logs: ${path.join(paths.logs, `${PREFIX}*.log`)})`
      : `Temporal's cluster: starting ${missing.join(', ')}`,
  );
  const deadline = Date.now() + 180_000;
  while (!(await serverAnswers(address).catch(() => false))) {
    failedToStart(started, files);
    if (Date.now() > deadline) throw new StackError(`timed out after 180 s waiting for Temporal's cluster on ${address}; see ${path.join(paths.logs, `${PREFIX}*.log`)}`);
    await sleep(250);
  }
  await prepareNamespace(address, config.temporal.namespace);
  if (missing.includes(UI)) await startUi(config, paths, log);
  return true;
}

/** Throws, with the end of its log, when a process this start began has exited. */
function failedToStart(started: { host: ClusterHost; pid: number }[], files: ReturnType<typeof temporalClusterFiles>) {
  const dead = started.find((s) => !isAlive(s.pid) || /\nState:\s+Z/.test(readOr(`/proc/${s.pid}/status`)));
  if (dead) throw new StackError(`${dead.host.name} of Temporal's cluster exited during startup; see ${files.log(dead.host.name)}\n${tailOf(files.log(dead.host.name), 4)}`);
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Stops every part (all at once: each drains on its own); true when any was running. */
export async function stopTemporalCluster(paths: CachePaths): Promise<boolean> {
  const names = fs.existsSync(paths.run) ? fs.readdirSync(paths.run).filter((f) => f.startsWith(PREFIX) && f.endsWith('.pid')).map((f) => f.slice(0, -'.pid'.length)) : [];
  const stopped = await Promise.all(names.map((name) => stopDaemon(paths.run, name, 20_000)));
  return stopped.includes(true);
}

/** One part of the cluster by its name (`history-1`, `frontend-2`, `balancer`, …): SIGTERM and a grace period, or SIGKILL at once. */
export async function stopClusterPart(paths: CachePaths, part: string, how: 'graceful' | 'kill' = 'graceful'): Promise<number | undefined> {
  const name = clusterDaemonName(part);
  const pid = runningPid(paths.run, name);
  if (pid === undefined) return undefined;
  if (how === 'kill') {
    process.kill(pid, 'SIGKILL');
    const deadline = Date.now() + 10_000;
    while (isAlive(pid) && runningPid(paths.run, name) !== undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  } else {
    await stopDaemon(paths.run, name, 30_000);
  }
  return pid;
}

function startBalancerDaemon(config: Config, paths: CachePaths) {
  const files = temporalClusterFiles(paths);
  const upstreams = frontendHosts(config.local.temporalPort).map((h) => String(h.ports.grpc));
  startDaemon({
    name: clusterDaemonName(BALANCER),
    command: process.execPath,
    args: ['--import', 'tsx', path.join(PROJECT_ROOT, 'tools', 'local-stack', 'temporal-cluster', 'balancer-main.ts'), String(config.local.temporalPort), ...upstreams],
    cwd: PROJECT_ROOT,
    runDir: paths.run,
    logFile: files.log(BALANCER),
  });
}

/** The Web UI: built on first use; a build that fails leaves the cluster running without it and says why. */
async function startUi(config: Config, paths: CachePaths, log: (m: string) => void) {
  let binary: string;
  try {
    binary = ensureUiServerBinary(paths, log);
  } catch (err) {
    log(`no Web UI: ${(err as Error).message}`);
    return;
  }
  const files = temporalClusterFiles(paths);
  fs.mkdirSync(files.uiDir, { recursive: true });
  const uiConfig = uiServerConfig({ temporalAddress: `127.0.0.1:${config.local.temporalPort}`, port: config.local.temporalUiPort, namespace: config.temporal.namespace });
  fs.writeFileSync(path.join(files.uiDir, `${UI_SERVER_ENV}.yaml`), `${JSON.stringify(uiConfig, null, 2)}\n`);
  const pid = startDaemon({
    name: clusterDaemonName(UI),
    command: binary,
    args: ['--root', files.uiDir, '--config', '.', '--env', UI_SERVER_ENV, 'start'],
    runDir: paths.run,
    logFile: files.log(UI),
  });
  await waitUntil(`the Temporal Web UI on port ${config.local.temporalUiPort}`, () => isListening(config.local.temporalUiPort), { timeoutMs: 30_000, pid, logFile: files.log(UI) });
  log(`Temporal Web UI on ${config.temporal.uiUrl}`);
}

async function refuseOtherTemporal(config: Config, paths: CachePaths, missing: string[]) {
  const port = config.local.temporalPort;
  // Another kind of Temporal from this cache folder on another LOCAL_TEMPORAL_PORT may run beside
  // the cluster (CI's cluster step shares the suite's PostgreSQL, Kafka and cache while the suite
  // runs on the dev server); on the same port it is a switch of TEMPORAL_SERVER without a stop.
  // While the cluster's own balancer runs (a part restarted), the port is the cluster's.
  const portTaken = missing.includes(BALANCER) && (await isListening(port));
  for (const [other, name] of [[TEMPORAL_SERVICE, 'dev server'], [TEMPORAL_SERVER_SERVICE, 'single-process server (TEMPORAL_SERVER=postgres)']] as const) {
    if (portTaken && runningPid(paths.run, other) !== undefined) {
      throw new StackError(`this stack's Temporal ${name} is running on port ${port}: stop it first (\`npm run stack:down\`), then start the stack again with TEMPORAL_SERVER=cluster`);
    }
  }
  const ports = clusterPorts(port);
  if (Math.min(...ports) < 1024 || Math.max(...ports) > 65_535) {
    throw new StackError(`LOCAL_TEMPORAL_PORT=${port}: Temporal's cluster also binds ports ${Math.min(...ports)}–${Math.max(...ports)} (docs/temporal-server.md); choose a port between 1324 and 65526`);
  }
  // Only the ports of parts this call starts: the others are held by the cluster's own processes.
  const hosts = clusterHosts(port).filter((h) => missing.includes(h.name));
  const wanted = [
    ...hosts.flatMap((h) => [h.ports.grpc, h.ports.membership, ...(h.ports.http ? [h.ports.http] : [])]),
    ...(missing.includes(BALANCER) ? [port] : []),
    ...(missing.includes(UI) ? [config.local.temporalUiPort] : []),
  ];
  for (const p of wanted) {
    if (await isListening(p)) {
      throw new StackError(`port ${p}, one of the ports Temporal's cluster binds around LOCAL_TEMPORAL_PORT=${port} (${ports.join(', ')}), is taken: stop what holds it, or set LOCAL_TEMPORAL_PORT elsewhere`);
    }
  }
}

/** One configuration file per process, rewritten on every start; the dynamic config file is the user's, created once. */
function writeHostConfigs(config: Config, paths: CachePaths, access: DatabaseAccess) {
  const files = temporalClusterFiles(paths);
  fs.mkdirSync(files.dir, { recursive: true });
  if (!fs.existsSync(files.dynamicConfig)) {
    fs.writeFileSync(files.dynamicConfig, '# Temporal dynamic config overrides for every process of the cluster (key: [{value: ...}]), re-read every 10 s.\n{}\n');
  }
  const [firstFrontend] = frontendHosts(config.local.temporalPort);
  // Every process's file names all four services: a process tracks in its membership only the
  // services its configuration lists. Its own entry carries its own ports; the others are the
  // ports of that service's first process (only the service a process starts binds anything).
  const all = clusterHosts(config.local.temporalPort);
  const firstOf = Object.fromEntries([...all].reverse().map((h) => [h.service, h.ports])) as Record<ClusterHost['service'], ClusterHost['ports']>;
  for (const host of all) {
    const hostConfig = temporalServerConfig({
      frontendPort: firstFrontend!.ports.grpc,
      database: access,
      dynamicConfigFile: files.dynamicConfig,
      historyShards: CLUSTER_HISTORY_SHARDS,
      services: { ...firstOf, [host.service]: host.ports },
      publicAddress: `127.0.0.1:${config.local.temporalPort}`,
      publicHttpAddress: `127.0.0.1:${firstFrontend!.ports.http}`,
      databases: CLUSTER_DATABASES,
      maxConns: host.maxConns,
    });
    // 0600: the file holds the database password when there is one.
    fs.writeFileSync(files.config(host.name), `${JSON.stringify(hostConfig, null, 2)}\n`, { mode: 0o600 });
    fs.chmodSync(files.config(host.name), 0o600);
  }
  return files;
}

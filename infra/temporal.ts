import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Config } from '../config/env';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';
import { ensureSearchAttributes } from './search-attributes';
import { hasCommand } from './toolchain';

// The Temporal CLI dev server (server + Web UI in one process) with its state in a SQLite file,
// so a restart keeps workflow history. The CLI comes from TEMPORAL_CLI, PATH, or a one-time
// `go install` of the newest tag that builds without replace directives.

export const TEMPORAL_SERVICE = 'temporal';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

export async function temporalStatus(config: Config, paths: CachePaths) {
  return { pid: runningPid(paths.run, TEMPORAL_SERVICE), listening: await isListening(config.local.temporalPort) };
}

/** Path of a usable `temporal` binary, building it into the cache when none is found. */
export function temporalCli(config: Config, paths: CachePaths, log: (m: string) => void): string {
  if (config.temporal.cli) {
    if (!fs.existsSync(config.temporal.cli)) throw new StackError(`TEMPORAL_CLI points at ${config.temporal.cli}, which does not exist: fix the path or unset it`);
    return config.temporal.cli;
  }
  const cached = path.join(paths.bin, 'temporal');
  if (fs.existsSync(cached)) return cached;
  if (hasCommand('temporal')) return 'temporal';
  if (!hasCommand('go')) {
    throw new StackError('the Temporal CLI is not on PATH and Go is not installed to build it: install Go 1.23+ (or put `temporal` on PATH, or set TEMPORAL_CLI, or TEMPORAL_ADDRESS to your own server)');
  }
  log(`building the Temporal CLI with \`go install ${TEMPORAL_CLI_MODULE}\` (first run only, a few minutes)`);
  try {
    execFileSync('go', ['install', TEMPORAL_CLI_MODULE], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // The machine's GOPROXY/GOSUMDB/GOFLAGS pass through untouched; only the output and caches move into ours.
      env: { ...process.env, GOBIN: paths.bin, GOMODCACHE: path.join(paths.go, 'mod'), GOCACHE: path.join(paths.go, 'build') },
    });
  } catch (err) {
    const stderr = `${(err as { stderr?: Buffer }).stderr ?? ''}`.trim().split('\n').slice(-5).join('\n');
    throw new StackError(`building the Temporal CLI failed:\n${stderr}`);
  }
  // Only the binary is reused; the 3 GB of module and build caches behind it are not.
  fs.rmSync(paths.go, { recursive: true, force: true });
  return cached;
}

export async function ensureTemporal(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const { temporalPort, temporalUiPort } = config.local;
  const address = `127.0.0.1:${temporalPort}`;
  let pid = runningPid(paths.run, TEMPORAL_SERVICE);
  if (pid === undefined) {
    for (const port of [temporalPort, temporalUiPort]) {
      if (await isListening(port)) {
        throw new StackError(`port ${port} is taken by a process that is not this project's Temporal server: stop it, or set LOCAL_TEMPORAL_PORT / LOCAL_TEMPORAL_UI_PORT, or TEMPORAL_ADDRESS to use that server`);
      }
    }
    const cli = temporalCli(config, paths, log);
    fs.mkdirSync(path.dirname(paths.temporalDb), { recursive: true });
    const logFile = path.join(paths.logs, 'temporal.log');
    pid = startDaemon({
      name: TEMPORAL_SERVICE,
      command: cli,
      args: [
        'server', 'start-dev',
        '--ip', '127.0.0.1',
        '--port', String(temporalPort),
        '--ui-port', String(temporalUiPort),
        '--namespace', config.temporal.namespace,
        '--db-filename', paths.temporalDb,
        // The dev server has one SQLite connection; WAL and no fsync per write keep it from being the bottleneck.
        '--sqlite-pragma', 'journal_mode=WAL',
        '--sqlite-pragma', 'synchronous=OFF',
        '--log-level', 'warn',
      ],
      runDir: paths.run,
      logFile,
    });
    log(`Temporal dev server starting on ${address}, Web UI on ${config.temporal.uiUrl} (log: ${logFile})`);
    await waitUntil(`the Temporal server on ${address}`, () => serverAnswers(address), { timeoutMs: 90_000, pid, logFile });
    await waitUntil(`the Temporal Web UI on port ${temporalUiPort}`, () => isListening(temporalUiPort), { timeoutMs: 30_000, pid, logFile });
    await registerSearchAttributes(address, config.temporal.namespace);
    return true;
  }
  await waitUntil(`the Temporal server on ${address}`, () => serverAnswers(address), { timeoutMs: 60_000, pid });
  await registerSearchAttributes(address, config.temporal.namespace);
  return false;
}

export function stopTemporal(paths: CachePaths): Promise<boolean> {
  return stopDaemon(paths.run, TEMPORAL_SERVICE, 20_000);
}

async function registerSearchAttributes(address: string, namespace: string) {
  const connection = await Connection.connect({ address, connectTimeout: 5000 });
  try {
    await ensureSearchAttributes(connection, namespace);
  } finally {
    await connection.close();
  }
}

async function serverAnswers(address: string): Promise<boolean> {
  const connection = await Connection.connect({ address, connectTimeout: 2000 });
  try {
    await connection.workflowService.describeNamespace({ namespace: 'default' });
    return true;
  } finally {
    await connection.close();
  }
}

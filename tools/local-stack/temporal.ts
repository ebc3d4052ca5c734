import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { StackConfig as Config } from './stack-config';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { temporalCli } from './temporal-cli';

// The Temporal CLI dev server (server + Web UI in one process) with its state in a SQLite file,
// so a restart keeps workflow history. Where the CLI binary comes from: tools/local-stack/temporal-cli.ts.

export const TEMPORAL_SERVICE = 'temporal';

export async function temporalStatus(config: Config, paths: CachePaths) {
  return { pid: runningPid(paths.run, TEMPORAL_SERVICE), listening: await isListening(config.local.temporalPort) };
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
    const sizeWarning = largeDevDbWarning(devDbBytes(paths.temporalDb), paths.temporalDb);
    if (sizeWarning) log(sizeWarning);
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

/**
 * The dev server keeps every run's history in one SQLite file. Closed workflows leave it after the
 * namespace's retention (a day), but SQLite reuses the freed pages without giving them back, so
 * the file stays at its largest: benchmarks and test suites grew it to 1.87 GB here in two hours.
 * Said at start, where deleting it is still safe (the server is not running).
 */
export const DEV_DB_WARNING_BYTES = 1024 ** 3;

export function largeDevDbWarning(bytes: number, file: string): string | undefined {
  if (bytes < DEV_DB_WARNING_BYTES) return undefined;
  return `the Temporal dev server's database is ${(bytes / 1024 ** 3).toFixed(2)} GiB (${file}*): SQLite keeps the space of deleted histories. To start with an empty one, \`npm run stack:down\` and delete those files (every workflow's history goes with them)`;
}

function devDbBytes(file: string): number {
  // The write-ahead log (journal_mode=WAL) beside the file holds pages not yet checkpointed.
  return [file, `${file}-wal`].reduce((sum, f) => sum + (fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0), 0);
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

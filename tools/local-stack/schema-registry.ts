import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { withBuildLock } from './build-lock';
import { StackError } from './errors';
import type { CachePaths } from './paths';
import { isListening } from './ports';
import { runningPid, startDaemon, stopDaemon, waitUntil } from './processes';
import type { StackConfig as Config } from './stack-config';
import { requireCommand } from './toolchain';

// Apicurio Registry for the local stack (opt-in: `stack up --with schema-registry`, and the tests
// that use a registry start it themselves): built once from Maven Central by
// tools/local-stack/schema-registry/pom.xml into the cache folder (Quarkus's runner jar and its
// lib/, as Apicurio's own build configuration packages it), run with `java -jar`, its
// schemas in an H2 file in the cache. Clients use its Confluent-compatible API.

export const SCHEMA_REGISTRY_SERVICE = 'schema-registry';
const MODULE = path.join(PROJECT_ROOT, 'tools', 'local-stack', 'schema-registry');
// Bumped with the pom, so a cache built from an older one is rebuilt.
const BUILD_STAMP = 'apicurio-2.4.2.Final-1';

/** The Confluent-compatible API of the local registry: what SCHEMA_REGISTRY_URL names. */
export function localSchemaRegistryUrl(port: number): string {
  return `http://127.0.0.1:${port}/apis/ccompat/v7`;
}

function registryDir(paths: CachePaths): string {
  return path.join(paths.root, 'schema-registry');
}

const RUNNER = 'schema-registry-1-runner.jar';

/**
 * The runnable registry's jar, built first when missing or built from another pom. One build at a
 * time: a caller that finds another process building (CI's background `stack build --with
 * schema-registry`) waits for it and uses its result.
 */
export async function buildSchemaRegistry(paths: CachePaths, log: (m: string) => void): Promise<string> {
  const dir = registryDir(paths);
  const jar = path.join(dir, 'app', RUNNER);
  const built = () => fs.existsSync(jar) && readOr(path.join(dir, 'app.version')) === BUILD_STAMP;
  if (built()) return jar;
  return withBuildLock(dir, 'the local Schema Registry', () => (built() ? jar : buildNow(paths, dir, log)), {
    onWait: () => log('waiting for another process building the Schema Registry'),
  });
}

function buildNow(paths: CachePaths, dir: string, log: (m: string) => void): string {
  const app = path.join(dir, 'app');
  const stamp = path.join(dir, 'app.version');
  requireCommand('mvn', 'Maven is needed once to build the local Schema Registry: install it with `apt-get install maven`, or set SCHEMA_REGISTRY_URL to your own registry');
  log('building Apicurio Registry from Maven Central jars (first run only, a few minutes)');
  const build = path.join(dir, 'build');
  fs.rmSync(build, { recursive: true, force: true });
  fs.cpSync(MODULE, build, { recursive: true });
  try {
    execFileSync('mvn', ['-B', '-q', '-f', path.join(build, 'pom.xml'), `-Dmaven.repo.local=${paths.m2}`, 'package'], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const out = `${(err as { stdout?: Buffer }).stdout ?? ''}${(err as { stderr?: Buffer }).stderr ?? ''}`.trim().split('\n').filter((l) => l.includes('ERROR')).slice(0, 5).join('\n');
    throw new StackError(`building the local Schema Registry failed (check Maven's settings and network):\n${out}`);
  }
  // Moved into place only when complete, so an interrupted build is never mistaken for a finished one.
  fs.rmSync(app, { recursive: true, force: true });
  fs.mkdirSync(app, { recursive: true });
  // The runner's manifest names its jars as lib/…, beside it.
  fs.renameSync(path.join(build, 'target', 'lib'), path.join(app, 'lib'));
  fs.renameSync(path.join(build, 'target', RUNNER), path.join(app, RUNNER));
  fs.rmSync(build, { recursive: true, force: true });
  fs.writeFileSync(stamp, `${BUILD_STAMP}\n`);
  return path.join(app, RUNNER);
}

/** The local registry: built and started when not running; true when this call started it. */
export async function ensureSchemaRegistry(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  const port = config.local.schemaRegistryPort;
  const dir = registryDir(paths);
  let pid = runningPid(dir, SCHEMA_REGISTRY_SERVICE);
  if (pid !== undefined) {
    await waitUntil(`the Schema Registry on port ${port}`, () => registryAnswers(port), { timeoutMs: 120_000, pid });
    return false;
  }
  if (await isListening(port)) {
    throw new StackError(`port ${port} is taken by a process that is not this project's Schema Registry: stop it, or set LOCAL_SCHEMA_REGISTRY_PORT`);
  }
  requireCommand('java', 'Java 17 or newer is needed to run the local Schema Registry, or set SCHEMA_REGISTRY_URL to your own registry');
  const jar = await buildSchemaRegistry(paths, log);
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const logFile = path.join(paths.logs, 'schema-registry.log');
  pid = startDaemon({
    name: SCHEMA_REGISTRY_SERVICE,
    command: 'java',
    // A small heap and the quick JIT tier: a test registry holds a few schemas, and starts in seconds.
    args: ['-Xms64m', '-Xmx384m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dquarkus.http.host=127.0.0.1', '-Djava.awt.headless=true', '-jar', jar],
    env: {
      ...process.env,
      HTTP_PORT: String(port),
      // A file, so ids survive a restart: a relay or consumer that cached an id keeps its meaning.
      REGISTRY_DATASOURCE_URL: `jdbc:h2:file:${path.join(dir, 'data', 'registry')}`,
      QUARKUS_DATASOURCE_JDBC_MIN_SIZE: '1',
      QUARKUS_DATASOURCE_JDBC_INITIAL_SIZE: '1',
    },
    cwd: dir,
    runDir: dir,
    logFile,
  });
  log(`Schema Registry starting on ${localSchemaRegistryUrl(port)} (log: ${logFile})`);
  await waitUntil(`the Schema Registry to answer on port ${port}`, () => registryAnswers(port), { timeoutMs: 120_000, pid, logFile });
  return true;
}

export function stopSchemaRegistry(paths: CachePaths): Promise<boolean> {
  return stopDaemon(registryDir(paths), SCHEMA_REGISTRY_SERVICE, 15_000);
}

export async function schemaRegistryStatus(config: Config, paths: CachePaths) {
  return { pid: runningPid(registryDir(paths), SCHEMA_REGISTRY_SERVICE), listening: await isListening(config.local.schemaRegistryPort) };
}

async function registryAnswers(port: number): Promise<boolean> {
  const response = await fetch(`${localSchemaRegistryUrl(port)}/subjects`, { signal: AbortSignal.timeout(2_000) });
  return response.ok;
}

function readOr(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return undefined;
  }
}

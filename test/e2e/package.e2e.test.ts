import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client, Connection } from '@temporalio/client';
import { PROJECT_ROOT } from '../../src/config/env';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { testKafka } from '../kit/kafka';
import { testTemporalClient } from '../kit/temporal';

const run = promisify(execFile);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'package-service');

// The package as a user gets it: `npm pack` (which builds dist/), installed from the tarball
// into a scratch project outside the repository (dependencies from the npm cache), then a tiny
// service there enqueues, relays and handles events through the public API alone, against the
// real stack. Its declarations are type-checked from the scratch project too.
describe('installable package: npm pack → install elsewhere → a service on the public API', function () {
  this.timeout(900_000);
  let scratch: string;
  let db: TestDatabase;
  let temporal: { client: Client; connection: Connection };
  const topic = uniqueName('pkg-events');
  const greetings = uniqueName('pkg-greetings');
  const shardPrefix = uniqueName('pkg-relay-shard');

  before(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-package-'));
    // Empty on purpose: the service's setUp applies the migrations shipped in the package.
    db = await createTestDatabase({ migrated: false });
    temporal = await testTemporalClient();
  });
  after(async () => {
    await temporal?.client.workflow.getHandle(`${shardPrefix}-0`).terminate('test finished').catch(() => undefined);
    await temporal?.connection.close();
    const admin = testKafka().admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic, greetings, `${topic}.dlq`] }).catch(() => undefined);
    await admin.disconnect();
    await db?.drop();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('packs, installs from the tarball, and the service applies its events through the public API', async () => {
    const packed = await run(npm, ['pack', '--json', '--pack-destination', scratch], { cwd: PROJECT_ROOT, maxBuffer: 64 * 1024 * 1024 });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    const files = info!.files.map((f) => f.path);
    for (const expected of ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/api/consumer.d.ts', 'dist/workflow-bundles/inbox.js', 'dist/workflow-bundles/relay.js', 'dist/workflow-bundles/scheduled.js', 'dist/migrations/0001_outbox_events.sql']) {
      assert.ok(files.includes(expected), `the tarball ships ${expected}`);
    }
    assert.ok(!files.some((f) => f.startsWith('test/') || f.startsWith('tools/')), 'no tests or benchmarks in the tarball');

    fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch-service', version: '1.0.0', private: true }));
    await run(npm, ['install', path.join(scratch, info!.filename), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: scratch, maxBuffer: 64 * 1024 * 1024 });
    fs.copyFileSync(path.join(FIXTURES, 'service.js.fixture'), path.join(scratch, 'service.js'));
    fs.copyFileSync(path.join(FIXTURES, 'types-check.ts.fixture'), path.join(scratch, 'types-check.ts'));

    // The declarations: the subpath exports resolve and type-check as a TypeScript service sees them.
    const tsc = require.resolve('typescript/bin/tsc');
    await run(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--skipLibCheck', '--types', 'node', '--typeRoots', path.join(PROJECT_ROOT, 'node_modules', '@types'), 'types-check.ts'], { cwd: scratch }).catch((err: { stdout?: string }) => {
      throw new Error(`the package's declarations do not type-check a service:\n${err.stdout}`);
    });

    const env = {
      ...process.env,
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic,
      KAFKA_DEAD_LETTER_TOPIC: `${topic}.dlq`,
      KAFKA_TOPIC_ROUTES: `greeting_sent=${greetings}`,
      KAFKA_PARTITIONS: '2',
      RELAY_SHARDS: '1',
      RELAY_TASK_QUEUE: uniqueName('pkg-relay'),
      CONSUMER_TASK_QUEUE: uniqueName('pkg-consumer'),
      CONSUMER_GROUP: uniqueName('pkg-group'),
      INBOX_CONSUMER: 'scratch-service',
      SHARD_ID_PREFIX: shardPrefix,
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: '',
    };
    const service = await run(process.execPath, ['service.js'], { cwd: scratch, env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`the service failed: ${err.message}\nstdout: ${err.stdout?.slice(-3000)}\nstderr: ${err.stderr?.slice(-3000)}`);
    });
    const line = service.stdout.split('\n').find((l) => l.startsWith('{"result"'));
    assert.ok(line, `the service printed its result; stdout: ${service.stdout.slice(-2000)}`);
    const { result } = JSON.parse(line) as { result: { migrations: number; topics: string[]; shards: number[]; greetings: string[] } };
    assert.ok(result.migrations >= 7, 'the package applied its own migrations to an empty database');
    assert.deepEqual([...result.topics].sort(), [greetings, topic, `${topic}.dlq`].sort(), 'setUp created the default, routed and dead-letter topics');
    assert.deepEqual(result.shards, [0]);
    assert.deepEqual(result.greetings, ['Ada', 'Grace']);

    // And the database agrees, from outside the service.
    const inbox = await db.pool.query(`SELECT count(*)::int AS n FROM inbox_processed_events WHERE consumer = 'scratch-service'`);
    assert.equal(inbox.rows[0].n, 2);
    const outbox = await db.pool.query('SELECT count(*)::int AS n FROM outbox_events WHERE published_at IS NULL');
    assert.equal(outbox.rows[0].n, 0);
  });
});

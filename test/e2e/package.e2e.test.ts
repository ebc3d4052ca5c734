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
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'package-service');

// The package as a user gets it: `npm pack` (which builds dist/), installed from the tarball
// into a scratch project outside the repository (dependencies from the npm cache). There an ES
// module service migrates and enqueues, the package's `bin` sets up and starts the relay, and a
// CommonJS service runs the workers and handles every event, through the public API alone,
// against the real stack. Its declarations are type-checked from the scratch project too.
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
    for (const expected of ['LICENSE', 'README.md', 'package.json', 'dist/src/cli/main.js', 'docs/adopting.md']) assert.ok(files.includes(expected), `the tarball ships ${expected}`);
    assert.deepEqual(files.filter((f) => f.startsWith('docs/measurements/') || f.startsWith('docs/screenshots/')), [], 'no measurement logs or screenshots in the tarball');

    fs.writeFileSync(path.join(scratch, 'package.json'), JSON.stringify({ name: 'scratch-service', version: '1.0.0', private: true }));
    await run(npm, ['install', path.join(scratch, info!.filename), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: scratch, maxBuffer: 64 * 1024 * 1024 });
    // The tracing SDK and exporter are optional peers: a service that exports no traces has none of them.
    for (const optional of ['@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http', '@temporalio/interceptors-opentelemetry']) {
      assert.ok(!fs.existsSync(path.join(scratch, 'node_modules', optional)), `${optional} is not installed with the package`);
    }
    fs.copyFileSync(path.join(FIXTURES, 'service.js.fixture'), path.join(scratch, 'service.js'));
    fs.mkdirSync(path.join(scratch, 'esm'));
    fs.writeFileSync(path.join(scratch, 'esm', 'package.json'), JSON.stringify({ name: 'scratch-esm-service', version: '1.0.0', private: true, type: 'module' }));
    fs.copyFileSync(path.join(FIXTURES, 'esm-service.js.fixture'), path.join(scratch, 'esm', 'service.js'));
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
      RELAY_WORKFLOW_ID_PREFIX: shardPrefix,
      EXPECTED_GREETINGS: '3',
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: '',
    };
    const node = (what: string, args: string[], cwd: string) =>
      run(process.execPath, args, { cwd, env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`${what} failed: ${err.message}\nstdout: ${err.stdout?.slice(-3000)}\nstderr: ${err.stderr?.slice(-3000)}`);
      });
    const resultOf = <T>(what: string, stdout: string): T => {
      const line = stdout.split('\n').find((l) => l.startsWith('{"result"'));
      assert.ok(line, `${what} printed its result; stdout: ${stdout.slice(-2000)}`);
      return (JSON.parse(line) as { result: T }).result;
    };

    // An ES module service: named, default and subpath imports of the CommonJS package, which
    // applies its migrations to the empty database and enqueues in the service's own transaction.
    const esm = resultOf<{ applied: number; enqueued: boolean; sameFunction: boolean }>('the ESM service', (await node('the ESM service', ['service.js'], path.join(scratch, 'esm'))).stdout);
    assert.ok(esm.applied >= 7, 'the package applied its own migrations to an empty database');
    assert.equal(esm.enqueued, true);
    assert.equal(esm.sameFunction, true, 'the root, default and subpath exports are one module');

    // The package's bin, as its docs and error messages name it: set up (topics, search
    // attributes; the migrations are there already), then start the relay's one shard.
    const bin = (args: string[]) => run(npx, ['--no-install', 'temporal-outbox', ...args], { cwd: scratch, env, timeout: 120_000 });
    const setup = await bin(['setup']);
    assert.match(setup.stdout, /migrations applied: none needed/);
    for (const t of [topic, greetings, `${topic}.dlq`]) assert.ok(setup.stdout.includes(t), `setup created ${t}: ${setup.stdout}`);
    const started = await bin(['relay', 'start', '--shards', '1']);
    assert.match(started.stdout, /started \[0\]/);

    // A CommonJS service runs the workers and applies everything: its own two events and the ESM service's.
    const result = resultOf<{ migrations: number; topics: string[]; greetings: string[] }>('the CommonJS service', (await node('the CommonJS service', ['service.js'], scratch)).stdout);
    assert.equal(result.migrations, 0, 'nothing left to migrate');
    assert.deepEqual(result.greetings, ['Ada', 'Grace', 'Linus']);

    // And the database agrees, from outside the service.
    const inbox = await db.pool.query(`SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events WHERE consumer = 'scratch-service'`);
    assert.equal(inbox.rows[0].n, 3);
    const outbox = await db.pool.query('SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL');
    assert.equal(outbox.rows[0].n, 0);
  });
});

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Client, Connection } from '@temporalio/client';
import { loadConfig, PROJECT_ROOT } from '../../src/config/env';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { deleteTopics } from '../kit/kafka';
import { installTarball, npx, packedTarball } from '../kit/package-tarball';
import { testTemporalClient } from '../kit/temporal';

const run = promisify(execFile);
const FIXTURES = path.join(PROJECT_ROOT, 'test', 'fixtures', 'adopter-service');
const EVENTS_PER_PATH = 5;
const OWN_TABLES = ['accounts', 'payments', 'shipments', 'schema_migrations'];

/** Each of the service's own tables, rows and columns, as one md5; and what public holds. */
async function fingerprint(db: TestDatabase): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const table of OWN_TABLES) {
    const { rows } = await db.pool.query<{ rows: string; columns: string }>(
      `SELECT (SELECT md5(coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '')) FROM public.${table} t) AS rows,
              (SELECT string_agg(column_name || ' ' || data_type || ' ' || coalesce(column_default, ''), ', ' ORDER BY ordinal_position)
                 FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1) AS columns`,
      [table],
    );
    result[table] = `${rows[0]!.rows} (${rows[0]!.columns})`;
  }
  const objects = await db.pool.query<{ names: string | null }>(
    `SELECT string_agg(name, ', ' ORDER BY name) AS names FROM (
       SELECT c.relname || ':' || c.relkind::text AS name FROM pg_class c WHERE c.relnamespace = 'public'::regnamespace
       UNION ALL SELECT p.proname || ':function' FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace
       UNION ALL SELECT t.tgname || ':trigger' FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = 'public'::regnamespace AND NOT t.tgisinternal) o`,
  );
  result['public objects'] = objects.rows[0]!.names ?? '';
  return result;
}

// An existing service adopts the package, built by `npm pack` and installed in a scratch project
// outside the repository. Its database already has tables named accounts, payments, shipments and
// a Rails-style schema_migrations, with rows. It applies the library's migrations, enqueues in its
// own transactions through its own pg.Pool, Kysely and Knex (the adapters are docs/adopting.md's
// snippets, copied from the same files), registers a handler for its own event type, runs the
// relay and consumer workers in its own process with its own pool and Temporal connection, and
// starts the relay with the package's bin. Every event is applied exactly once, the rolled-back
// ones never, and nothing of the service's changes.
describe('an existing service adopts the packed package: its tables untouched, every event applied once', function () {
  this.timeout(900_000);
  const services = loadConfig();
  let scratch: string;
  let db: TestDatabase;
  let temporal: { client: Client; connection: Connection };
  const topic = uniqueName('adopter-events');
  const shardPrefix = uniqueName('adopter-relay-shard');

  before(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-adopter-'));
    db = await createTestDatabase({ migrated: false });
    temporal = await testTemporalClient();
  });
  after(async () => {
    await temporal?.client.workflow.getHandle(`${shardPrefix}-0`).terminate('test finished').catch(() => undefined);
    await temporal?.connection.close();
    await deleteTopics([topic, `${topic}.dlq`]);
    await db?.drop();
    if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('migrates into its own schema, enqueues through pg, Kysely and Knex, applies each event once, and leaves its tables as they were', async () => {
    await db.pool.query(fs.readFileSync(path.join(FIXTURES, 'schema.sql'), 'utf8'));
    const before = await fingerprint(db);

    const tarball = await packedTarball();
    await installTarball(scratch, tarball, {
      name: 'parcel-service',
      version: '1.0.0',
      private: true,
      dependencies: { pg: '^8.23.1' },
      // kysely 0.29 is ES-module only (and needs Node 22), which npm picks on Node 22: this service
      // is CommonJS, as many are, so it stays on 0.28 on every Node line.
      devDependencies: { kysely: '^0.28.0', knex: '^3.1.0', '@types/pg': '^8.23.1' },
    });
    for (const [from, to] of [['service.ts.fixture', 'service.ts'], ['kysely-outbox.ts.fixture', 'kysely-outbox.ts'], ['knex-outbox.ts.fixture', 'knex-outbox.ts']]) {
      fs.copyFileSync(path.join(FIXTURES, from!), path.join(scratch, to!));
    }
    // Compiled as a TypeScript service compiles itself: strict, against the package's declarations and the builders' own.
    const tsc = require.resolve('typescript/bin/tsc');
    await run(process.execPath, [tsc, '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', '--esModuleInterop', '--skipLibCheck',
      '--types', 'node', '--typeRoots', path.join(PROJECT_ROOT, 'node_modules', '@types'), '--outDir', 'build', 'service.ts'], { cwd: scratch }).catch((err: { stdout?: string }) => {
      throw new Error(`the service does not compile against the package:\n${err.stdout}`);
    });

    const relayTaskQueue = uniqueName('adopter-relay');
    const env = {
      ...process.env,
      DATABASE_URL: db.url,
      EVENTS_PER_PATH: String(EVENTS_PER_PATH),
      // The service's own configuration, which it passes to resolveConfig.
      SERVICE_KAFKA_BROKERS: services.kafka.brokers.join(','),
      SERVICE_TEMPORAL_ADDRESS: services.temporal.address,
      SERVICE_TEMPORAL_NAMESPACE: services.temporal.namespace,
      SERVICE_TOPIC: topic,
      SERVICE_GROUP: uniqueName('adopter-group'),
      SERVICE_RELAY_TASK_QUEUE: relayTaskQueue,
      SERVICE_CONSUMER_TASK_QUEUE: uniqueName('adopter-consumer'),
      SERVICE_RELAY_PREFIX: shardPrefix,
      // The same settings under the library's variables, for its bin.
      KAFKA_TOPIC: topic,
      KAFKA_DEAD_LETTER_TOPIC: `${topic}.dlq`,
      RELAY_SHARDS: '1',
      RELAY_TASK_QUEUE: relayTaskQueue,
      RELAY_WORKFLOW_ID_PREFIX: shardPrefix,
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: '',
    };
    const service = async (step: string): Promise<Record<string, unknown>> => {
      const out = await run(process.execPath, ['build/service.js', step], { cwd: scratch, env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 }).catch(
        (err: { stdout?: string; stderr?: string; message: string }) => {
          throw new Error(`the service's ${step} step failed: ${err.message}\nstdout: ${err.stdout?.slice(-3000)}\nstderr: ${err.stderr?.slice(-3000)}`);
        },
      );
      const line = out.stdout.split('\n').find((l) => l.startsWith('{"result"'));
      assert.ok(line, `the ${step} step printed its result; stdout: ${out.stdout.slice(-2000)}`);
      return (JSON.parse(line) as { result: Record<string, unknown> }).result;
    };

    const enqueued = await service('enqueue');
    const shipped = fs.readdirSync(path.join(scratch, 'node_modules', 'temporal-outbox', 'dist', 'migrations')).filter((f) => f.endsWith('.sql'));
    assert.equal(enqueued.migrationsApplied, shipped.length, 'every shipped migration applied, none refused for the service\'s tables');
    const ledger = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM temporal_outbox.migrations');
    assert.equal(ledger.rows[0]!.n, shipped.length, 'the ledger is the library\'s own, in its schema');

    const started = await run(npx, ['--no-install', 'temporal-outbox', 'relay', 'start'], { cwd: scratch, env, timeout: 120_000 });
    assert.match(started.stdout, /started \[0\]/);

    const worked = await service('work');
    const expected = { knex: EVENTS_PER_PATH, kysely: EVENTS_PER_PATH, pg: EVENTS_PER_PATH };
    assert.deepEqual(worked.scansByPath, expected);

    // From outside the service: once each, by the handler and in the inbox; the rolled-back never.
    const scans = await db.pool.query<{ via: string; n: number; events: number; parcels: number }>(
      'SELECT via, count(*)::int AS n, count(DISTINCT event_id)::int AS events, count(DISTINCT parcel_id)::int AS parcels FROM parcel_scans GROUP BY via ORDER BY via',
    );
    assert.deepEqual(scans.rows, Object.entries(expected).map(([via, n]) => ({ via, n, events: n, parcels: n })), 'each event applied exactly once');
    const parcels = await db.pool.query<{ parcel_id: string }>('SELECT parcel_id FROM parcels EXCEPT SELECT parcel_id FROM parcel_scans');
    assert.deepEqual(parcels.rows, [], 'every committed parcel was scanned, and no rolled-back one was written');
    const inbox = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM temporal_outbox.inbox_processed_events i JOIN parcel_scans s ON s.event_id = i.event_id WHERE i.consumer = 'parcel-service'`,
    );
    assert.equal(inbox.rows[0]!.n, 3 * EVENTS_PER_PATH, 'one inbox row per applied event');
    const outbox = await db.pool.query<{ n: number; pending: number; rolled_back: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE published_at IS NULL)::int AS pending,
              count(*) FILTER (WHERE payload ->> 'parcel_id' LIKE '%rolled-back')::int AS rolled_back
         FROM temporal_outbox.outbox_events`,
    );
    assert.deepEqual(outbox.rows[0], { n: 3 * EVENTS_PER_PATH, pending: 0, rolled_back: 0 }, 'the rolled-back transactions took their events with them');

    assert.deepEqual(await fingerprint(db), before, "the service's own tables, rows and columns, and what public holds, are as they were before the install");
  });
});

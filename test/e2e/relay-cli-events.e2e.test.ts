import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { PROJECT_ROOT } from '../../src/config/env';
import { HEADERS } from '../../src/kafka/message-format';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic } from '../kit/kafka';
import { readWholeTopic, RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';
import { insertVersionedRow } from '../kit/versioned-rows';
import { nodeScript } from '../kit/compiled-build';

const CLI = path.join(PROJECT_ROOT, 'src', 'cli', 'main.ts');
const EVENTS_MODULE = path.join('test', 'fixtures', 'events', 'order-placed-module.ts');

// The package's bin CLI running the relay worker with the service's events module: a plain-SQL
// row whose payload its type's schema refuses is parked with the schema's message, the good rows
// around it are published. A real worker process, real PostgreSQL, Kafka and Temporal.
describe('`temporal-outbox relay worker --events <module>`: the bin CLI relay checks rows against the event types', function () {
  this.timeout(400_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let relay: RelayProcess | undefined;
  let temporal: { client: Client; connection: Connection };

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(1);
    temporal = await testTemporalClient();
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.kill9();
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const insert = (payload: Record<string, unknown>, version?: number) =>
    insertVersionedRow(db.pool, 'order_placed', { type: 'order_placed', ...payload }, version);

  it('parks the rows the schema refuses with its message and publishes the good ones', async () => {
    const relayQueue = uniqueName('cli-events-relay');
    // A .ts events module needs the TypeScript loader for import(), as docs/events.md says.
    relay = new RelayProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: relayQueue }, ['--import', 'tsx'], [CLI, 'relay', 'worker', '--events', EVENTS_MODULE]);
    await relay.waitUntilRunning(240_000);
    await insert({ event_id: 'good-v1', order_id: 'o-1', customer: 'Ada Lovelace', total: 1250 });
    await insert({ event_id: 'bad-v1', order_id: 'o-2', customer: 'Bob', total: '12' });
    await insert({ event_id: 'bad-v2', order_id: 'o-3', first_name: 'Grace', total_minor: 5 }, 2);
    await insert({ event_id: 'good-v2', order_id: 'o-4', first_name: 'Alan', last_name: 'Turing', total_minor: 99 }, 2);
    await insert({ event_id: 'good-v1-after', order_id: 'o-5', customer: 'Edsger Dijkstra', total: 7 });
    await startShard(temporal.client, relayQueue, { batchSize: 10 });
    await eventually('nothing pending', async () => (await db.pool.query('SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL')).rowCount === 0, 120_000);

    const parked = await db.pool.query(`SELECT payload->>'event_id' AS event_id, last_error FROM temporal_outbox.outbox_events WHERE parked_at IS NOT NULL ORDER BY id`);
    assert.deepEqual(parked.rows, [
      { event_id: 'bad-v1', last_error: 'order_placed v1: total: Invalid input: expected number, received string' },
      { event_id: 'bad-v2', last_error: 'order_placed v2: last_name: Invalid input: expected string, received undefined' },
    ]);
    const published = (await readWholeTopic(topic.topic)).map((m) => m.headers[HEADERS.eventId]);
    assert.deepEqual(published, ['good-v1', 'good-v2', 'good-v1-after']);
    assert.ok(relay.logLines.some((l) => l.includes('relay worker running') && l.includes('"eventTypes":["order_placed"]')), 'the worker says which types it checks');
  });

  it('refuses to start, naming the module, when the module has no event definitions', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...nodeScript(CLI), 'relay', 'worker', '--events', 'test/fixtures/events/no-events-module.ts'], { cwd: PROJECT_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`still running after 60 s:\n${stderr}`)), 60_000);
      child.on('exit', (c) => (clearTimeout(timer), resolve(c)));
    });
    assert.equal(code, 1);
    assert.match(stderr, /relay worker refused to start: test\/fixtures\/events\/no-events-module\.ts has no event definitions/);
  });
});

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { Pool } from 'pg';
import pino from 'pino';
import { Registry, register as globalRegistry } from 'prom-client';
import { defineHandler, enqueue, resolveConfig, runConsumerWorker, runRelayWorker, startRelayShards, loadConfig } from '../../src';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { deleteTopics } from '../kit/kafka';
import { eventually } from '../kit/wait';

// A service that adopts the library in its own process: its own pg.Pool, Temporal connection
// and client, pino logger and prom-client Registry, handed to the public API. Everything it
// enqueues in its own transactions is applied once; the library's metrics land in its registry
// and nowhere else; and what it handed over is still its own, open and usable, afterwards.

const EVENTS = 60;
const EVENT_TYPE = 'service_thing_happened';

describe('a service wires the library in with its own pool, Temporal clients, logger and registry', function () {
  this.timeout(240_000);
  // Only where the test stack's services are: the service brings everything else itself.
  const services = loadConfig();
  let db: TestDatabase;
  let pool: Pool;
  let nativeConnection: NativeConnection;
  let connection: Connection;
  let client: Client;
  const topic = uniqueName('service-events');
  const prefix = uniqueName('service-relay');
  const logLines: { msg?: string; name?: string }[] = [];

  before(async () => {
    db = await createTestDatabase();
    await db.pool.query('CREATE TABLE service_applied (event_id text NOT NULL, seq int NOT NULL)');
    pool = new Pool({ connectionString: db.url, max: 8 });
    nativeConnection = await NativeConnection.connect({ address: services.temporal.address });
    connection = await Connection.connect({ address: services.temporal.address });
    client = new Client({ connection, namespace: services.temporal.namespace });
  });

  after(async () => {
    for (const i of [0, 1]) await client?.workflow.getHandle(`${prefix}-${i}`).terminate('test finished').catch(() => undefined);
    await pool?.end();
    await nativeConnection?.close();
    await connection?.close();
    await deleteTopics([topic, `${topic}.dlq`]);
    await db?.drop();
  });

  it('applies every event once, records metrics in its registry only, and leaves its pool and connections open', async () => {
    const registry = new Registry();
    const logger = pino(
      { level: 'info', base: { service: 'adopter' } },
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          for (const line of chunk.toString().split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as { msg?: string });
          done();
        },
      }),
    );
    // No database URL: the service's pool is the library's database.
    const config = resolveConfig({
      kafka: { brokers: services.kafka.brokers, topic, deadLetterTopic: `${topic}.dlq`, consumerGroup: uniqueName('service-group'), partitions: 2 },
      temporal: { address: services.temporal.address, namespace: services.temporal.namespace },
      relay: { shards: 2, taskQueue: uniqueName('service-relay-tq'), workflowIdPrefix: prefix },
      consumer: { taskQueue: uniqueName('service-consumer-tq'), inboxName: uniqueName('service-inbox') },
    });
    assert.equal(config.database.url, undefined);
    const handler = defineHandler<{ seq: number }>({
      eventType: EVENT_TYPE,
      validate: (p) => (typeof p.seq === 'number' ? { ok: true, data: { seq: p.seq } } : { ok: false, reason: 'seq must be a number' }),
      async apply(tx, event) {
        await tx.query('INSERT INTO service_applied (event_id, seq) VALUES ($1, $2)', [event.eventId, event.data.seq]);
      },
    });

    const stop = new AbortController();
    const injected = { pool, connection: nativeConnection, logger, registry, signal: stop.signal };
    const relay = runRelayWorker(config, injected);
    const consumer = runConsumerWorker(config, { ...injected, handlers: [handler] });
    try {
      // Its own transactions: a business row and the events, committed together.
      await pool.query('CREATE TABLE service_orders (id int PRIMARY KEY)');
      for (let seq = 0; seq < EVENTS; seq += 10) {
        const tx = await pool.connect();
        try {
          await tx.query('BEGIN');
          await tx.query('INSERT INTO service_orders (id) VALUES ($1)', [seq]);
          for (let i = seq; i < seq + 10; i++) await enqueue(tx, { eventType: EVENT_TYPE, key: `order-${i % 7}`, payload: { type: EVENT_TYPE, seq: i } });
          await tx.query('COMMIT');
        } finally {
          tx.release();
        }
      }
      const started = await startRelayShards(config, { client, pool });
      assert.deepEqual(started.started, [0, 1]);
      await eventually(`${EVENTS} events applied`, async () => Number((await pool.query('SELECT count(*) AS n FROM service_applied')).rows[0].n) >= EVENTS, 180_000, 500);
    } finally {
      stop.abort();
      await Promise.all([relay, consumer]);
    }

    const applied = await pool.query<{ n: string; distinct_events: string; distinct_seqs: string }>(
      'SELECT count(*) AS n, count(DISTINCT event_id) AS distinct_events, count(DISTINCT seq) AS distinct_seqs FROM service_applied',
    );
    assert.deepEqual(applied.rows[0], { n: String(EVENTS), distinct_events: String(EVENTS), distinct_seqs: String(EVENTS) }, 'every event applied exactly once');

    const published = await registry.getSingleMetric('outbox_published_events_total')?.get();
    assert.equal(published?.values.find((v) => v.labels.event_type === EVENT_TYPE)?.value, EVENTS, 'the relay counted in the service registry');
    const appliedMetric = await registry.getSingleMetric('inbox_events_applied_total')?.get();
    assert.ok((appliedMetric?.values.reduce((sum, v) => sum + v.value, 0) ?? 0) >= EVENTS, 'the consumer counted in the service registry');
    assert.equal(globalRegistry.getSingleMetric('outbox_published_events_total'), undefined, "nothing in prom-client's global registry");

    assert.ok(logLines.some((l) => l.msg === 'relay worker running'), "the relay logged through the service's logger");
    assert.ok(logLines.some((l) => l.msg === 'consumer worker running'), "the consumer logged through the service's logger");

    // Still the service's: neither ended nor closed by the library.
    assert.equal((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
    await nativeConnection.workflowService.getSystemInfo({});
    await client.workflowService.getSystemInfo({});
  });
});

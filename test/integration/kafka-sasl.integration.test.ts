import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config/env';
import { Kafka, logLevel } from 'kafkajs';
import { createKafka } from '../../src/kafka/client';
import { kafkaConnectionOptions } from '../../src/kafka/connection-options';
import { ensureTopics } from '../../src/kafka/topics';
import { enqueue } from '../../src/outbox/enqueue';
import { consumerEnv, spawnConsumer, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { RelayProcess, startShard, terminateStartedShards } from '../kit/relay-harness';
import { startSaslBroker, type SaslBroker } from '../kit/sasl-broker';
import { makeTestPki, type TestPki } from '../kit/tls-proxy';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// Managed Kafka asks clients to authenticate: the relay and a consumer publish and consume
// through a broker that accepts only SASL SCRAM-SHA-512 (a broker of this test's own; the
// shared one is left alone), the password read from a file as KAFKA_SASL_PASSWORD_FILE says.
// A wrong password stops the worker with an error that names the cause. PostgreSQL and Temporal
// are the shared stack's (own database, task queues, workflow ids).
describe('Kafka SASL SCRAM-SHA-512: the relay and a consumer through an authenticating broker', function () {
  this.timeout(300_000);
  const STARTUP_MS = 180_000;
  let dir: string;
  let broker: SaslBroker;
  let pki: TestPki;
  let db: TestDatabase;
  let temporal: { client: Client; connection: Connection };
  let relay: RelayProcess | undefined;
  let consumer: ConsumerProcess | undefined;
  let env: Record<string, string>;

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outbox-sasl-'));
    pki = makeTestPki(path.join(dir, 'tls'), 'kafka.outbox.test');
    broker = await startSaslBroker(dir, 23_000 + Math.floor(Math.random() * 500) * 4, { certFile: pki.serverCertFile, keyFile: pki.serverKeyFile });
    const passwordFile = path.join(dir, 'kafka-password');
    fs.writeFileSync(passwordFile, `${broker.password}\n`, { mode: 0o600 });
    db = await createTestDatabase();
    temporal = await testTemporalClient();
    const topic = uniqueName('sasl-events');
    env = {
      ...consumerEnv({ databaseUrl: db.url, topic, group: uniqueName('sasl-group'), taskQueue: uniqueName('sasl-credit'), partitions: 2 }),
      KAFKA_BROKERS: broker.saslAddress,
      KAFKA_SASL_MECHANISM: 'scram-sha-512',
      KAFKA_SASL_USERNAME: broker.username,
      KAFKA_SASL_PASSWORD_FILE: passwordFile,
      RELAY_TASK_QUEUE: uniqueName('sasl-relay'),
      METRICS_PORT_BASE: '0',
    };
    await db.pool.query('INSERT INTO accounts (account_id) VALUES (1), (2)');
  });
  after(async () => {
    await terminateStartedShards();
    await relay?.kill9();
    await consumer?.stop('SIGKILL');
    await temporal?.connection.close();
    await db?.drop();
    await broker?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('refuses clients without credentials: the broker really authenticates', async () => {
    const anonymous = createKafka(loadConfig({ ...process.env, KAFKA_BROKERS: broker.saslAddress }), uniqueName('anonymous')).admin();
    // Without SASL the broker drops the connection at the first request.
    await assert.rejects(anonymous.connect().then(() => anonymous.listTopics()));
    await anonymous.disconnect().catch(() => undefined);
  });

  it('publishes and credits every event through SASL, under the workers\' own PostgreSQL roles', async () => {
    const config = loadConfig({ ...process.env, ...env });
    // setup's step, through the authenticated connection (the workers would create them too).
    assert.deepEqual((await ensureTopics(createKafka(config, uniqueName('sasl-setup')), config)).sort(), [config.kafka.deadLetterTopic, config.kafka.topic].sort());
    relay = new RelayProcess(env);
    consumer = spawnConsumer(env);
    await Promise.all([relay.waitUntilRunning(STARTUP_MS), consumer.waitForLog((l) => l.msg === 'consumer worker running', STARTUP_MS)]);
    await startShard(temporal.client, env.RELAY_TASK_QUEUE!, { batchSize: 50 });

    const balances = async () => (await db.pool.query<{ balance: string }>('SELECT balance::text FROM accounts ORDER BY account_id')).rows.map((r) => Number(r.balance));
    assert.deepEqual(await balances(), [0, 0], 'nothing credited before the events');
    for (let i = 0; i < 30; i++) {
      await enqueue(db.pool, { eventType: 'payment_confirmed', payload: { event_id: `sasl-${i}`, type: 'payment_confirmed', account_id: 1 + (i % 2), amount: 100 + i } });
    }
    // Account 1 gets the even i (100+0, +2, ... +28), account 2 the odd ones.
    const expected = [0, 1].map((odd) => Array.from({ length: 15 }, (_, k) => 100 + 2 * k + odd).reduce((a, b) => a + b, 0));
    await eventually('every event credited through the SASL broker', async () => JSON.stringify(await balances()) === JSON.stringify(expected), 120_000, 500);
    const { rows } = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM temporal_outbox.outbox_events WHERE published_at IS NULL');
    assert.equal(rows[0]!.n, 0, 'all published');
    const logs = relay.logLines.join('\n') + relay.stderr + JSON.stringify(consumer.logs) + consumer.stderr.join('');
    assert.ok(!logs.includes(broker.password), 'the SASL password appears in a worker log');
  });

  it('a wrong password stops the worker with an error that says authentication failed', async () => {
    const wrong = path.join(dir, 'wrong-password');
    fs.writeFileSync(wrong, 'not-the-password\n', { mode: 0o600 });
    const failing = spawnConsumer({ ...env, KAFKA_SASL_PASSWORD_FILE: wrong, CONSUMER_GROUP: uniqueName('sasl-wrong'), CONSUMER_TASK_QUEUE: uniqueName('sasl-wrong') });
    const exit = await Promise.race([failing.exited, new Promise<undefined>((r) => setTimeout(() => r(undefined), 120_000))]);
    await failing.stop('SIGKILL');
    assert.ok(exit, 'the worker exits instead of retrying forever');
    assert.equal(exit.code, 1);
    const stderr = failing.stderr.join('');
    assert.match(stderr, /consumer worker failed: .*SASL SCRAM SHA512 authentication failed/i);
    assert.ok(!stderr.includes('not-the-password'), 'the wrong password is not echoed either');
  });

  it('SASL over TLS (SASL_SSL): with KAFKA_SSL_CA_FILE the client trusts the broker; without it the handshake is refused', async () => {
    const topics = async (extra: Record<string, string>) => {
      const config = loadConfig({ ...process.env, ...env, KAFKA_BROKERS: broker.saslSslAddress!, ...extra });
      // The options every client of the project is built with (src/kafka/connection-options.ts); no retries, so a refusal is quick.
      const admin = new Kafka({ clientId: uniqueName('sasl-ssl'), ...kafkaConnectionOptions(config), logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
      try {
        await admin.connect();
        return await admin.listTopics();
      } catch (err) {
        return (err as Error).message;
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    };
    const listed = await topics({ KAFKA_SSL_CA_FILE: pki.caFile });
    assert.ok(Array.isArray(listed) && listed.includes(env.KAFKA_TOPIC!), `topics over SASL_SSL: ${String(listed)}`);
    assert.match(String(await topics({ KAFKA_SSL: 'true' })), /self[- ]signed|unable to (get|verify)|certificate/i, 'the public roots do not trust the test CA');
  });
});

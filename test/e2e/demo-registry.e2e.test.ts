import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import avro from 'avsc';
import { loadConfig, PROJECT_ROOT } from '../../src/config/env';
import { SchemaRegistryClient } from '../../src/formats/registry/client';
import { LOCAL_STACK_VARIABLES, loadStackConfig } from '../../tools/local-stack/stack-config';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, deleteTopics } from '../kit/kafka';
import { readWholeTopic } from '../kit/relay-harness';
import { testSchemaRegistry } from '../kit/schema-registry';
import { testTemporalClient } from '../kit/temporal';

// The README's `npm start -- --with-registry`, run as written for a few seconds: beside the
// payments, the shipping example's order_shipped events go to their topic in Avro through the
// local Schema Registry and the consumer records them through it; the demo exits 0 only if every
// shipment is recorded. Checked here from outside the demo too: the messages on the topic carry the
// Confluent magic byte and the id the registry serves for the subject, decode to the shipments,
// and each shipment is recorded once in the example's table.
// Kept short: the stack's running registry is reused (started here only if it is not running,
// after CI's background build, which testSchemaRegistry waits for), the demo runs on a scratch
// database of the stack's PostgreSQL (migrated, as a stack the demo ran on before), and on topics, group, queues and schedules of its own (the
// shipments' topic through KAFKA_TOPIC_ROUTES, which the demo keeps), so it neither sees nor
// leaves behind anything of a real `npm start`.
describe('npm start -- --with-registry (the README\'s registry demo)', function () {
  this.timeout(300_000);
  let registry: { url: string; stop: () => Promise<void> };
  let db: TestDatabase;
  let payments: { topic: string; remove(): Promise<void> };
  let deadLetter: { topic: string; remove(): Promise<void> };
  const shipmentsTopic = uniqueName('demo-orders');
  let env: Record<string, string>;

  before(async function () {
    // The first run on a machine builds the registry from Maven Central.
    this.timeout(20 * 60_000);
    registry = await testSchemaRegistry();
    db = await createTestDatabase({ prefix: 'demo_registry' });
    // A shipment an earlier run recorded, whose outbox row retention has since deleted (after a
    // day): the demo must count only the shipments it still has in the outbox.
    await db.pool.query(`INSERT INTO shipments (order_id, carrier, tracking_number, event_id, shipped_at) VALUES ('ord_earlier', 'demo-post', 'TRK1', 'earlier-run', now() - interval '2 days')`);
    payments = await createTestTopic(2);
    deadLetter = await createTestTopic(1);
    const shared = loadConfig();
    env = {
      DATABASE_URL: db.url,
      KAFKA_BROKERS: shared.kafka.brokers.join(','),
      TEMPORAL_ADDRESS: shared.temporal.address,
      TEMPORAL_UI_URL: shared.temporal.uiUrl,
      KAFKA_TOPIC: payments.topic,
      KAFKA_DEAD_LETTER_TOPIC: deadLetter.topic,
      KAFKA_PARTITIONS: '2',
      KAFKA_TOPIC_ROUTES: `order_shipped=${shipmentsTopic}`,
      CONSUMER_GROUP: uniqueName('demo-registry-group'),
      RELAY_TASK_QUEUE: uniqueName('demo-registry-relay'),
      CONSUMER_TASK_QUEUE: uniqueName('demo-registry-credit'),
      RETENTION_TASK_QUEUE: uniqueName('demo-registry-retention'),
      RETENTION_SCHEDULE_ID: uniqueName('demo-registry-retention-schedule'),
      AUDIT_SCHEDULE_ID: uniqueName('demo-registry-audit-schedule'),
      RELAY_WORKFLOW_ID_PREFIX: uniqueName('demo-registry-shard'),
    };
  });
  after(async () => {
    const config = loadStackConfig(demoEnv(env));
    const { client, connection } = await testTemporalClient();
    for (let i = 0; i < config.relay.shards; i++) await client.workflow.getHandle(config.relay.workflowId(i)).terminate('test finished').catch(() => undefined);
    await client.schedule.getHandle(env.RETENTION_SCHEDULE_ID!).delete().catch(() => undefined);
    await client.schedule.getHandle(env.AUDIT_SCHEDULE_ID!).delete().catch(() => undefined);
    await connection.close();
    await payments?.remove();
    await deadLetter?.remove();
    await deleteTopics([shipmentsTopic]).catch(() => undefined);
    await db?.drop();
    await registry?.stop();
  });

  it('ships orders in Avro through the registry and the consumer records every one exactly once', async () => {
    const startedAt = Date.now();
    const child = spawn('npm', ['start', '--', '--with-registry', '--rate', '20', '--duration', '4'], { cwd: PROJECT_ROOT, env: demoEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGINT');
        reject(new Error(`the demo still ran after 240 s:\n${output}`));
      }, 240_000);
      child.on('exit', (c) => (clearTimeout(timer), resolve(c)));
    });
    process.stdout.write(`      (the demo ran ${((Date.now() - startedAt) / 1000).toFixed(1)} s)\n`);
    assert.equal(code, 0, `npm start -- --with-registry exited with ${code}:\n${output}`);

    // What the demo says.
    const subject = `${shipmentsTopic}-value`;
    const ready = new RegExp(`Schema Registry ready in [\\d.]+ s: order_shipped goes to ${shipmentsTopic} in Avro \\(subject ${subject}, schema id (\\d+)\\)`).exec(output);
    assert.ok(ready, `the demo names the subject and schema id:\n${output}`);
    const peek = new RegExp(`a shipment on ${shipmentsTopic}: \\d+ bytes starting 00 ([0-9a-f]{2} ){3}[0-9a-f]{2}: magic byte 0, schema id (\\d+), then the Avro body`).exec(output);
    assert.ok(peek, `the demo shows a value's first bytes:\n${output}`);
    const recorded = /(\d+) of (\d+) shipments recorded by the consumer, each decoded through the registry/.exec(output);
    assert.ok(recorded && recorded[1] === recorded[2] && Number(recorded[1]) > 0, `every shipment recorded, says the demo:\n${output}`);
    assert.match(output, /all \d+ confirmed payments are credited exactly once/, 'the payments beside them are credited too');

    // The registry serves that id for the subject: the schema the messages are written with.
    const served = await new SchemaRegistryClient({ url: registry.url, requestTimeoutMs: 10_000 }).latest(subject);
    assert.equal(served.schemaType, 'AVRO');
    assert.equal(Number(ready[1]), served.id, 'the id the demo printed is the subject\'s');
    assert.equal(Number(peek[2]), served.id, 'the value the demo showed carries it');
    const avroType = avro.Type.forSchema(JSON.parse(served.schema) as avro.Schema);

    // Every message on the topic: magic byte 0, that schema id, an Avro body that decodes.
    const messages = await readWholeTopic(shipmentsTopic);
    assert.ok(messages.length > 0, 'shipments on the topic');
    const decoded = messages.map((m) => {
      const value = m.valueBytes!;
      assert.equal(value[0], 0, 'the Confluent magic byte');
      assert.equal(value.readUInt32BE(1), served.id, 'the subject\'s schema id');
      return avroType.fromBuffer(value.subarray(5)) as unknown as Record<string, string>;
    });

    // They are the shipments the demo enqueued, and each is recorded once in the example's table.
    const enqueued = await db.pool.query<{ event_id: string; order_id: string; carrier: string; tracking_number: string }>(
      `SELECT payload->>'event_id' AS event_id, payload->>'order_id' AS order_id, payload->>'carrier' AS carrier, payload->>'tracking_number' AS tracking_number
         FROM temporal_outbox.outbox_events WHERE event_type = 'order_shipped'`,
    );
    assert.equal(enqueued.rows.length, Number(recorded[2]), 'the demo counted every shipment it enqueued');
    const expected = byEventId(enqueued.rows);
    // A message may be on the topic twice (the relay delivers at least once); the set is what counts.
    const onTopic = new Map(decoded.map((d) => [d.event_id, { event_id: d.event_id!, order_id: d.order_id!, carrier: d.carrier!, tracking_number: d.tracking_number! }]));
    assert.deepEqual(byEventId([...onTopic.values()]), expected, 'the topic holds exactly the enqueued shipments, decoded');
    const shipments = await db.pool.query<{ event_id: string; order_id: string; carrier: string; tracking_number: string }>(`SELECT event_id, order_id, carrier, tracking_number FROM shipments WHERE event_id <> 'earlier-run'`);
    assert.deepEqual(byEventId(shipments.rows), expected, 'each shipment recorded exactly once, as enqueued');
  });
});

function byEventId<T extends { event_id: string }>(rows: T[]): T[] {
  return [...rows].sort((a, b) => (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0));
}

/** The test run's environment without its own stack's services (named in `env`), its cache folder and registry port kept. */
function demoEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const copy: NodeJS.ProcessEnv = { ...process.env };
  for (const key of LOCAL_STACK_VARIABLES) delete copy[key];
  return { ...copy, ...env };
}

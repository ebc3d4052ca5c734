import assert from 'node:assert/strict';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Client, Connection } from '@temporalio/client';
import { loadConfig, type Config } from '../../src/config/env';
import { inTransaction } from '../../src/db/pool';
import { enqueue } from '../../src/outbox/enqueue';
import { confirmPayment } from '../../examples/payments/confirm-payment';
import { createPayment } from '../../examples/payments/create-payment';
import { runConsumerWorker } from '../../workers/consumer.worker';
import { exampleHandlers } from '../../examples/payments/consumer-worker';
import { runRelayWorker } from '../../workers/relay.worker';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { readWholeTopic, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// One trace from the producer's transaction to the credited balance, on the real services: the
// production relay and consumer workers (runRelayWorker, runConsumerWorker) run in this process
// with an in-memory span exporter in place of OTLP, a relay shard workflow on Temporal moves the
// row to Kafka, and the consumer applies it through its applyEventsWorkflow.
describe('traces: one W3C trace from enqueue to the applied credit, through the outbox row, Kafka and Temporal', function () {
  this.timeout(240_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let temporal: { client: Client; connection: Connection };
  let config: Config;
  const exporter = new InMemorySpanExporter();
  const stop = new AbortController();
  let workers: Promise<unknown>;

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(2);
    temporal = await testTemporalClient();
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (7, 0)');
    config = loadConfig({
      ...process.env,
      DATABASE_URL: db.url,
      KAFKA_TOPIC: topic.topic,
      KAFKA_PARTITIONS: '2',
      KAFKA_DEAD_LETTER_TOPIC: `${topic.topic}.dlq`,
      RELAY_TASK_QUEUE: uniqueName('traces-relay'),
      RELAY_SHARDS: '1',
      CONSUMER_TASK_QUEUE: uniqueName('traces-consumer'),
      CONSUMER_GROUP: uniqueName('traces-group'),
      METRICS_PORT_BASE: '0',
      LOG_LEVEL: 'warn',
      // Must not matter: the span processor given to the workers is what they export to.
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
    });
    const spanProcessor = new SimpleSpanProcessor(exporter);
    workers = Promise.all([
      runRelayWorker(config, { signal: stop.signal, spanProcessor }),
      runConsumerWorker(config, { handlers: exampleHandlers(process.env), signal: stop.signal, spanProcessor }),
    ]);
    workers.catch(() => undefined);
    // The consumer joined its group: both workers are past their tracing set-up and running.
    const admin = testKafka().admin();
    await admin.connect();
    try {
      await eventually('the consumer joined its group', async () => {
        const { groups } = await admin.describeGroups([config.kafka.consumerGroup]);
        return groups[0]!.members.length > 0;
      }, 180_000);
    } finally {
      await admin.disconnect();
    }
  });

  after(async () => {
    await terminateStartedShards();
    stop.abort();
    await workers?.catch(() => undefined);
    await temporal?.connection.close();
    await topic?.remove();
    await db?.drop();
  });

  const balance = async () => Number((await db.pool.query('SELECT balance FROM accounts WHERE account_id = 7')).rows[0].balance);
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string, traceId: string) => spans().filter((s) => s.name === name && s.spanContext().traceId === traceId);
  const parentOf = (s: ReadableSpan) => s.parentSpanId;

  it('enqueue inside the producer span → relay publish → consumer apply: one trace id, each span the child of the one before', async () => {
    await createPayment(db.pool, { paymentId: 'traced-1', accountId: 7, amount: 1250 });
    const tracer = trace.getTracer('test-producer');
    const producer = tracer.startSpan('confirm payment (the producer service)', { kind: SpanKind.SERVER });
    const traceId = producer.spanContext().traceId;
    assert.ok(producer.isRecording(), 'the workers registered a recording tracer provider for the process');
    const confirmed = await context.with(trace.setSpan(context.active(), producer), () => inTransaction(db.pool, (c) => confirmPayment(c, { paymentId: 'traced-1' })));
    producer.end();
    assert.ok(confirmed.confirmed);

    // The row carries the trace: a traceparent of this trace id, written by enqueue's own span.
    const row = await db.pool.query(`SELECT headers FROM temporal_outbox.outbox_events WHERE payload ->> 'event_id' = $1`, [confirmed.eventId]);
    const stored = String(row.rows[0].headers.traceparent);
    assert.match(stored, new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const [enqueueSpan] = named('outbox enqueue payment_confirmed', traceId);
    assert.ok(enqueueSpan, 'an outbox enqueue span in the producer trace');
    assert.equal(parentOf(enqueueSpan), producer.spanContext().spanId);
    assert.equal(stored.split('-')[2], enqueueSpan.spanContext().spanId);

    // False before the event flows (no relay shard runs yet): not credited, no publish or consumer span in this trace.
    assert.equal(await balance(), 0);
    assert.equal(named(`outbox publish ${topic.topic}`, traceId).length, 0);
    assert.equal(named('inbox apply payment_confirmed', traceId).length, 0);

    await startShard(temporal.client, config.relay.taskQueue!, { shardIndex: 0, shardCount: 1, batchSize: 100 });

    await eventually('credited', async () => (await balance()) === 1250, 120_000);
    await eventually('the apply span ended', async () => named('inbox apply payment_confirmed', traceId).length > 0, 30_000);

    const [publish] = named(`outbox publish ${topic.topic}`, traceId);
    assert.ok(publish, 'the relay published in the same trace');
    assert.equal(publish.kind, SpanKind.PRODUCER);
    assert.equal(parentOf(publish), enqueueSpan.spanContext().spanId, 'publish is the child of enqueue');
    assert.equal(publish.attributes['messaging.message.id'], confirmed.eventId);

    const [apply] = named('inbox apply payment_confirmed', traceId);
    assert.equal(apply!.kind, SpanKind.CONSUMER);
    assert.equal(parentOf(apply!), publish.spanContext().spanId, 'the handler span is the child of the publish span (the Kafka header)');
    assert.equal(apply!.attributes['inbox.outcome'], 'applied');
    assert.equal(apply!.attributes['messaging.message.id'], confirmed.eventId);

    // On the topic: the message carries the publish span's traceparent.
    const messages = await readWholeTopic(topic.topic);
    const message = messages.find((m) => m.headers['event-id'] === confirmed.eventId)!;
    assert.equal(message.headers.traceparent, `00-${traceId}-${publish.spanContext().spanId}-01`);

    // Temporal's interceptors tie the workflows in: the relay session that published the batch and
    // the consumer's apply activity are spans (RunActivity), linked from the event's spans.
    // (A session's span ends with the session: a moment after the shard is drained.)
    await eventually('the relay session span ended', async () => spans().some((s) => s.spanContext().spanId === publish.links[0]?.context.spanId), 30_000);
    const byId = new Map(spans().map((s) => [s.spanContext().spanId, s]));
    const linkedName = (s: ReadableSpan) => s.links.map((l) => byId.get(l.context.spanId)?.name);
    assert.deepEqual(linkedName(publish), ['RunActivity:relayShardSession']);
    assert.deepEqual(linkedName(apply!), ['RunActivity:applyEvents']);
    const applyActivity = byId.get(apply!.links[0]!.context.spanId)!;
    const workflowTrace = spans().filter((s) => s.spanContext().traceId === applyActivity.spanContext().traceId).map((s) => s.name);
    for (const name of ['inbox apply batch payments-credit', 'StartWorkflow:applyEventsWorkflow', 'RunWorkflow:applyEventsWorkflow', 'StartActivity:applyEvents', 'RunActivity:applyEvents']) {
      assert.ok(workflowTrace.includes(name), `${name} in the consumer workflow's trace (got ${workflowTrace.join(', ')})`);
    }
    const batchSpan = spans().find((s) => s.name === 'inbox apply batch payments-credit' && s.spanContext().traceId === applyActivity.spanContext().traceId)!;
    assert.ok(batchSpan.links.some((l) => l.context.spanId === publish.spanContext().spanId), 'the batch span links back to the event');
  });

  it('without an active span nothing is added: the row has no traceparent and still flows, untraced', async () => {
    const before = spans().length;
    const { eventId } = await inTransaction(db.pool, (c) => enqueue(c, { eventType: 'payment_confirmed', payload: { type: 'payment_confirmed', account_id: 7, amount: 5 } }));
    const row = await db.pool.query(`SELECT headers FROM temporal_outbox.outbox_events WHERE payload ->> 'event_id' = $1`, [eventId]);
    assert.deepEqual(row.rows[0].headers, {});
    await eventually('credited', async () => (await balance()) === 1255, 120_000);
    const eventSpans = spans().slice(before).filter((s) => s.attributes['messaging.message.id'] === eventId);
    assert.deepEqual(eventSpans, [], 'the relay and consumer continue traces; they start none per event');
  });
});

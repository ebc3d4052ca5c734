import assert from 'node:assert/strict';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
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
  const pick = (s: ReadableSpan, names: string[]) => Object.fromEntries(names.map((n) => [n, s.attributes[n]]));

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
    assert.equal(named(`send ${topic.topic}`, traceId).length, 0);
    assert.equal(named(`process ${topic.topic}`, traceId).length, 0);

    await startShard(temporal.client, config.relay.taskQueue!, { shardIndex: 0, shardCount: 1, batchSize: 100 });

    await eventually('credited', async () => (await balance()) === 1250, 120_000);
    await eventually('the apply span ended', async () => named(`process ${topic.topic}`, traceId).length > 0, 30_000);
    const messages = await readWholeTopic(topic.topic);
    const message = messages.find((m) => m.headers['event-id'] === confirmed.eventId)!;

    // OpenTelemetry's messaging conventions: `send <topic>` (PRODUCER), then `process <topic>` (CONSUMER).
    const [publish] = named(`send ${topic.topic}`, traceId);
    assert.ok(publish, 'the relay published in the same trace');
    assert.equal(publish.kind, SpanKind.PRODUCER);
    assert.equal(parentOf(publish), enqueueSpan.spanContext().spanId, 'publish is the child of enqueue');
    assert.deepEqual(pick(publish, ['messaging.system', 'messaging.operation.name', 'messaging.operation.type', 'messaging.destination.name', 'messaging.message.id', 'messaging.kafka.message.key']), {
      'messaging.system': 'kafka',
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.destination.name': topic.topic,
      'messaging.message.id': confirmed.eventId,
      'messaging.kafka.message.key': message.key,
    });

    const [apply] = named(`process ${topic.topic}`, traceId);
    assert.equal(apply!.kind, SpanKind.CONSUMER);
    assert.equal(parentOf(apply!), publish.spanContext().spanId, 'the handler span is the child of the publish span (the Kafka header)');
    assert.equal(apply!.attributes['inbox.outcome'], 'applied');
    assert.deepEqual(pick(apply!, ['messaging.system', 'messaging.operation.name', 'messaging.operation.type', 'messaging.destination.name', 'messaging.destination.partition.id', 'messaging.kafka.offset', 'messaging.consumer.group.name', 'messaging.message.id', 'error.type']), {
      'messaging.system': 'kafka',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.destination.name': topic.topic,
      'messaging.destination.partition.id': String(message.partition),
      'messaging.kafka.offset': message.offset,
      'messaging.consumer.group.name': config.kafka.consumerGroup,
      'messaging.message.id': confirmed.eventId,
      'error.type': undefined,
    });

    // On the topic: the message carries the publish span's traceparent.
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
    for (const name of [`process ${topic.topic}`, 'StartWorkflow:applyEventsWorkflow', 'RunWorkflow:applyEventsWorkflow', 'StartActivity:applyEvents', 'RunActivity:applyEvents']) {
      assert.ok(workflowTrace.includes(name), `${name} in the consumer workflow's trace (got ${workflowTrace.join(', ')})`);
    }
    const batchSpan = spans().find((s) => s.name === `process ${topic.topic}` && s.spanContext().traceId === applyActivity.spanContext().traceId)!;
    assert.ok(batchSpan.links.some((l) => l.context.spanId === publish.spanContext().spanId), 'the batch span links back to the event');
    assert.equal(batchSpan.kind, SpanKind.CONSUMER);
    assert.deepEqual(pick(batchSpan, ['messaging.system', 'messaging.operation.name', 'messaging.destination.name', 'messaging.consumer.group.name', 'messaging.batch.message_count']), {
      'messaging.system': 'kafka',
      'messaging.operation.name': 'process',
      'messaging.destination.name': topic.topic,
      'messaging.consumer.group.name': config.kafka.consumerGroup,
      'messaging.batch.message_count': 1,
    });
  });

  it('an event the handler refuses (unknown account): its process span ends in error with error.type = rejected', async () => {
    const tracer = trace.getTracer('test-producer');
    const producer = tracer.startSpan('confirm payment for an unknown account', { kind: SpanKind.SERVER });
    const traceId = producer.spanContext().traceId;
    await context.with(trace.setSpan(context.active(), producer), () =>
      inTransaction(db.pool, (c) => enqueue(c, { eventType: 'payment_confirmed', payload: { type: 'payment_confirmed', account_id: 404, amount: 5 } })),
    );
    producer.end();
    await eventually('the process span ended', async () => named(`process ${topic.topic}`, traceId).length > 0, 120_000);
    const [apply] = named(`process ${topic.topic}`, traceId);
    assert.equal(apply!.attributes['inbox.outcome'], 'rejected');
    assert.equal(apply!.attributes['error.type'], 'rejected');
    assert.equal(apply!.status.code, SpanStatusCode.ERROR);
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

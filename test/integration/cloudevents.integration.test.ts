import assert from 'node:assert/strict';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Client, Connection } from '@temporalio/client';
import { CloudEvent, Kafka as CloudEventsKafka, type KafkaMessage } from 'cloudevents';
import { loadConfig, type Config } from '../../src/config/env';
import { inTransaction } from '../../src/db/pool';
import { enqueue } from '../../src/outbox/enqueue';
import { exampleHandlers } from '../../examples/payments/consumer-worker';
import { runConsumerWorker } from '../../workers/consumer.worker';
import { runRelayWorker } from '../../workers/relay.worker';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { readWholeTopic, startShard, terminateStartedShards } from '../kit/relay-harness';
import { testTemporalClient } from '../kit/temporal';
import { eventually } from '../kit/wait';

// The CloudEvents Kafka binding on the real services, once per content mode: the production relay
// and consumer workers (in this process) on a topic set to that mode. The `cloudevents` SDK reads
// what our relay put on the topic; our consumer applies what the SDK wrote, once however often it
// is delivered; a CloudEvent it cannot read is parked with its reason while good ones flow.
for (const mode of ['binary', 'structured'] as const) {
  describe(`CloudEvents ${mode} mode: the cloudevents SDK reads our relay's messages, our consumer applies the SDK's`, function () {
    this.timeout(240_000);
    let db: TestDatabase;
    let topic: { topic: string; remove(): Promise<void> };
    let temporal: { client: Client; connection: Connection };
    let config: Config;
    const stop = new AbortController();
    const exporter = new InMemorySpanExporter();
    let workers: Promise<unknown>;

    before(async () => {
      db = await createTestDatabase();
      topic = await createTestTopic(1);
      temporal = await testTemporalClient();
      await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (7, 0)');
      config = loadConfig({
        ...process.env,
        DATABASE_URL: db.url,
        KAFKA_TOPIC: topic.topic,
        KAFKA_PARTITIONS: '1',
        KAFKA_DEAD_LETTER_TOPIC: `${topic.topic}.dlq`,
        CLOUDEVENTS_TOPICS: `${topic.topic}=${mode}`,
        CLOUDEVENTS_SOURCE: 'https://payments.example.com/outbox',
        RELAY_TASK_QUEUE: uniqueName(`ce-${mode}-relay`),
        RELAY_SHARDS: '1',
        CONSUMER_TASK_QUEUE: uniqueName(`ce-${mode}-consumer`),
        CONSUMER_GROUP: uniqueName(`ce-${mode}-group`),
        METRICS_PORT_BASE: '0',
        LOG_LEVEL: 'warn',
        OTEL_EXPORTER_OTLP_ENDPOINT: '',
      });
      const spanProcessor = new SimpleSpanProcessor(exporter);
      workers = Promise.all([runRelayWorker(config, { signal: stop.signal, spanProcessor }), runConsumerWorker(config, { handlers: exampleHandlers(process.env), signal: stop.signal, spanProcessor })]);
      workers.catch(() => undefined);
      const admin = testKafka().admin();
      await admin.connect();
      try {
        await eventually('the consumer joined its group', async () => (await admin.describeGroups([config.kafka.consumerGroup])).groups[0]!.members.length > 0, 180_000);
      } finally {
        await admin.disconnect();
      }
      await startShard(temporal.client, config.relay.taskQueue!, { shardIndex: 0, shardCount: 1, batchSize: 100 });
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
    const inboxRows = async (eventId: string) => (await db.pool.query('SELECT 1 FROM temporal_outbox.inbox_processed_events WHERE event_id = $1', [eventId])).rowCount;
    const parked = async () => (await db.pool.query<{ reason: string }>('SELECT reason FROM temporal_outbox.inbox_parked_events ORDER BY kafka_offset')).rows.map((r) => r.reason);

    it('the SDK reads the event our relay published: id, type, source, time (the row’s created_at), data, key, trace; our consumer credits it in the same trace', async () => {
      const producerSpan = trace.getTracer('test-producer').startSpan('confirm payment', { kind: SpanKind.SERVER });
      const traceId = producerSpan.spanContext().traceId;
      const { eventId } = await context.with(trace.setSpan(context.active(), producerSpan), () =>
        inTransaction(db.pool, (c) => enqueue(c, { eventType: 'payment_confirmed', key: '7', payload: { type: 'payment_confirmed', account_id: 7, amount: 1000 } })),
      );
      producerSpan.end();
      const created = await db.pool.query<{ created_at: string; payload: Record<string, unknown> }>(
        `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at, payload FROM temporal_outbox.outbox_events WHERE payload ->> 'event_id' = $1`,
        [eventId],
      );
      await eventually('credited by our consumer', async () => (await balance()) === 1000, 120_000);

      const [message] = (await readWholeTopic(topic.topic)).filter((m) => m.headers['event-id'] === eventId);
      assert.ok(message, 'the event is on the topic');
      assert.equal(message.key, '7', 'the key is unchanged');
      if (mode === 'binary') assert.deepEqual(JSON.parse(message.value), created.rows[0]!.payload, 'binary mode: the value is the payload');
      else assert.equal(message.headers['content-type'], 'application/cloudevents+json; charset=UTF-8');

      const event = CloudEventsKafka.toEvent({ key: message.key, value: message.value, headers: message.headers, body: message.value } as KafkaMessage<string>) as CloudEvent<Record<string, unknown>>;
      assert.equal(event.validate(), true);
      assert.equal(event.id, eventId);
      assert.equal(event.type, 'payment_confirmed');
      assert.equal(event.source, 'https://payments.example.com/outbox');
      assert.equal(event.time, created.rows[0]!.created_at);
      assert.deepEqual(event.data, created.rows[0]!.payload);
      assert.equal(await inboxRows(eventId), 1);

      // The trace crosses the outbox hop as in the plain format: the Kafka header names the relay's
      // send span, the consumer's process span is its child; the CloudEvents tracing extension
      // carries the context the event was created in (the enqueue span).
      const spans = exporter.getFinishedSpans().filter((sp) => sp.spanContext().traceId === traceId);
      const enqueueSpan = spans.find((sp) => sp.name === 'outbox enqueue payment_confirmed')!;
      const send = spans.find((sp) => sp.name === `send ${topic.topic}`)!;
      assert.ok(enqueueSpan && send, `enqueue and send spans in the trace (got ${spans.map((sp) => sp.name).join(', ')})`);
      assert.equal(message.headers.traceparent, `00-${traceId}-${send.spanContext().spanId}-01`);
      assert.equal(event.traceparent, `00-${traceId}-${enqueueSpan.spanContext().spanId}-01`);
      await eventually('the process span ended', async () => exporter.getFinishedSpans().some((sp) => sp.name === `process ${topic.topic}` && sp.spanContext().traceId === traceId), 30_000);
      const processSpan = exporter.getFinishedSpans().find((sp) => sp.name === `process ${topic.topic}` && sp.spanContext().traceId === traceId)!;
      assert.equal(processSpan.parentSpanId, send.spanContext().spanId);
      assert.equal(processSpan.attributes['messaging.message.id'], eventId);
    });

    it('our consumer applies events the SDK wrote, each once though delivered twice; a malformed CloudEvent is parked with its reason, the next good one still credited', async () => {
      const before = await balance();
      const sdkEvent = (id: string, amount: number) =>
        new CloudEvent({ id, source: 'https://billing.example.com', type: 'payment_confirmed', time: '2026-06-01T12:00:00.000Z', datacontenttype: 'application/json', data: { account_id: 7, amount } });
      const written = (event: CloudEvent<unknown>) => {
        const m = mode === 'binary' ? CloudEventsKafka.binary(event) : CloudEventsKafka.structured(event);
        // The SDK leaves binary data as the object it was given: the producer serialises it.
        const value = typeof m.value === 'string' ? m.value : JSON.stringify(m.value);
        return { key: '7', value, headers: Object.fromEntries(Object.entries(m.headers).filter(([, v]) => v !== undefined).map(([k, v]) => [k, String(v)])) };
      };
      const first = written(sdkEvent(`sdk-${mode}-1`, 25));
      const second = written(sdkEvent(`sdk-${mode}-2`, 5));
      const malformed =
        mode === 'binary'
          ? { key: '7', value: JSON.stringify({ account_id: 7, amount: 999 }), headers: { ...first.headers, ce_specversion: '0.3', ce_id: `sdk-${mode}-old` } }
          : { key: '7', value: JSON.stringify({ specversion: '1.0', source: '/x', type: 'payment_confirmed', data: { account_id: 7, amount: 999 } }), headers: first.headers };

      // False before: the SDK's events are not credited until they are on the topic.
      assert.equal(await inboxRows(`sdk-${mode}-1`), 0);

      const producer = testKafka().producer();
      await producer.connect();
      try {
        await producer.send({ topic: topic.topic, messages: [first, first, malformed, second] });
      } finally {
        await producer.disconnect();
      }
      await eventually('the good SDK events credited', async () => (await balance()) === before + 30, 120_000);
      await eventually('the malformed one parked', async () => (await parked()).length === 1, 30_000);
      assert.equal(await inboxRows(`sdk-${mode}-1`), 1, 'one inbox row for the event delivered twice');
      assert.equal(await inboxRows(`sdk-${mode}-2`), 1);
      assert.deepEqual(await parked(), [mode === 'binary' ? 'CloudEvents specversion "0.3" is not supported (only 1.0)' : 'CloudEvent without id (id)']);
      // Nothing more arrives later: the duplicate stays absorbed.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      assert.equal(await balance(), before + 30);
    });
  });
}

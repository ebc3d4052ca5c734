import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { consumerEnv, spawnConsumer, waitUntilRunning, wireMessage, type ConsumerProcess } from '../kit/consumer-harness';
import { createTestDatabase, type TestDatabase } from '../kit/database';
import { uniqueName } from '../kit/ids';
import { createTestTopic, testKafka } from '../kit/kafka';
import { eventually } from '../kit/wait';

interface ReceivedSpan {
  service: string;
  name: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  attributes: Record<string, unknown>;
}

// The configuration path of tracing, as an operator sets it: a consumer worker process started
// with OTEL_EXPORTER_OTLP_ENDPOINT (and a header, as a collector's API key would be) exports its
// spans over OTLP/HTTP; here to an HTTP endpoint of the test's own that records what arrives
// (no collector can be downloaded on this machine). A message on the topic carries a
// traceparent as the relay writes it; the worker's handler span continues that trace, and its
// JSON log line for the batch carries the trace id of the batch's span.
describe('traces: OTLP export configured by OTEL_* variables, trace ids in the logs', function () {
  this.timeout(240_000);
  let db: TestDatabase;
  let topic: { topic: string; remove(): Promise<void> };
  let consumer: ConsumerProcess;
  let collector: http.Server;
  const received: ReceivedSpan[] = [];
  const authHeaders: string[] = [];

  before(async () => {
    db = await createTestDatabase();
    topic = await createTestTopic(2);
    await db.pool.query('INSERT INTO accounts (account_id, balance) VALUES (3, 0)');
    collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/v1/traces') {
          authHeaders.push(String(req.headers['x-api-key']));
          received.push(...parseOtlpJson(body));
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const port = (collector.address() as AddressInfo).port;
    consumer = spawnConsumer(
      consumerEnv({
        databaseUrl: db.url,
        topic: topic.topic,
        group: uniqueName('otlp-group'),
        taskQueue: uniqueName('otlp-consumer'),
        partitions: 2,
        extra: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=test%20key', METRICS_PORT_BASE: '0' },
      }),
    );
    await waitUntilRunning(consumer);
  });

  after(async () => {
    await consumer?.stop();
    collector?.close();
    await topic?.remove();
    await db?.drop();
  });

  it('the handler span reaches the OTLP endpoint as the child of the message’s traceparent; the batch log line carries its trace id', async () => {
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    const publishSpanId = '1122334455667788';
    const eventId = uniqueName('otlp-event');
    const ours = () => received.filter((s) => s.traceId === traceId);
    const exportLine = consumer.logs.find((l) => l.msg === 'exporting OpenTelemetry traces');
    assert.ok(exportLine, 'the worker says where its traces go');
    assert.ok(!JSON.stringify(exportLine).includes('test key'), 'the OTLP headers (credentials) are never logged');

    // False before the event flows: nothing of this trace arrived, nothing credited.
    assert.equal(ours().length, 0);
    const message = wireMessage({ event_id: eventId, account_id: 3, amount: 40 }, 1);
    const producer = testKafka().producer();
    await producer.connect();
    await producer.send({ topic: topic.topic, messages: [{ ...message, headers: { ...message.headers, traceparent: `00-${traceId}-${publishSpanId}-01` } }] });
    await producer.disconnect();

    await eventually('credited', async () => Number((await db.pool.query('SELECT balance FROM accounts WHERE account_id = 3')).rows[0].balance) === 40, 120_000);
    // BatchSpanProcessor: exported within its 5 s schedule.
    await eventually('the handler span exported', async () => ours().some((s) => s.name === `process ${topic.topic}`), 30_000);
    const [apply] = ours().filter((s) => s.name === `process ${topic.topic}`);
    assert.equal(apply!.parentSpanId, publishSpanId, 'child of the span the Kafka header names');
    assert.equal(apply!.service, 'temporal-outbox-consumer');
    assert.equal(apply!.attributes['messaging.message.id'], eventId);
    assert.equal(apply!.attributes['messaging.system'], 'kafka');
    assert.equal(apply!.attributes['messaging.kafka.offset'], 0);
    assert.equal(apply!.attributes['inbox.outcome'], 'applied');
    assert.ok(authHeaders.every((h) => h === 'test key'), `OTEL_EXPORTER_OTLP_HEADERS sent, percent-decoded (got ${authHeaders.join(', ')})`);

    // The batch's log line leads to its trace: the batch span, and the workflow and activity spans under it.
    const line = consumer.logs.find((l) => l.msg === 'batch applied' && l.applied === 1);
    assert.ok(line, 'a batch applied line');
    assert.match(String(line.trace_id), /^[0-9a-f]{32}$/);
    assert.equal(line.workflowId !== undefined, true);
    await eventually('the batch trace exported', async () => received.some((s) => s.traceId === line.trace_id && s.name === 'RunActivity:applyEvents'), 30_000);
    const batchTrace = received.filter((s) => s.traceId === line.trace_id).map((s) => s.name);
    for (const name of [`process ${topic.topic}`, 'StartWorkflow:applyEventsWorkflow', 'RunWorkflow:applyEventsWorkflow', 'RunActivity:applyEvents']) {
      assert.ok(batchTrace.includes(name), `${name} in the batch's trace (got ${batchTrace.join(', ')})`);
    }
    // Payload bodies stay out of the logs.
    assert.ok(!consumer.logs.some((l) => JSON.stringify(l).includes('"amount"')), 'no payload in the logs');
  });
});

/** Spans of an OTLP/HTTP JSON export request (ids hex, or base64 as some encoders write them). */
function parseOtlpJson(body: string): ReceivedSpan[] {
  const id = (v: unknown) => (typeof v !== 'string' || v === '' ? '' : /^[0-9a-f]+$/.test(v) ? v : Buffer.from(v, 'base64').toString('hex'));
  const value = (v: Record<string, unknown>) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
  const out: ReceivedSpan[] = [];
  const request = JSON.parse(body) as { resourceSpans?: { resource?: { attributes?: { key: string; value: Record<string, unknown> }[] }; scopeSpans?: { spans?: Record<string, unknown>[] }[] }[] };
  for (const rs of request.resourceSpans ?? []) {
    const service = String(value(rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value ?? {}));
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const attributes = Object.fromEntries(((s.attributes ?? []) as { key: string; value: Record<string, unknown> }[]).map((a) => [a.key, value(a.value)]));
        out.push({ service, name: String(s.name), traceId: id(s.traceId), spanId: id(s.spanId), parentSpanId: id(s.parentSpanId), attributes });
      }
    }
  }
  return out;
}

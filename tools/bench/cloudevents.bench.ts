import { resolveCloudEvents } from '../../src/formats/cloudevents/settings';
import { validateEnvelope, type RawMessage } from '../../src/inbox/validate-envelope';
import { toKafkaMessage, type CloudEventsEncoding, type OutboxKafkaMessage } from '../../src/outbox/kafka-message';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';
import { commandLine, median, saveBenchmark } from './support/report';

// What CloudEvents cost per event on the two hot paths, in this process with no broker: the
// relay's message building (toKafkaMessage: the plain format, binary mode, structured mode) and
// the consumer's envelope reading (validateEnvelope on the message as kafkajs hands it over:
// Buffer value and Buffer headers). CPU µs per event (process.cpuUsage, user + system), the
// three formats alternating round by round so they see the same machine. The rest of each path
// (Kafka, PostgreSQL, Temporal) is the same for all three and is not in these figures.
// Run: npm run bench:cloudevents   (BENCH_ROUNDS=N, 15 by default; BENCH_RESULTS_DIR to keep a smoke run apart)

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 20_000);
const FORMATS = ['plain', 'binary', 'structured'] as const;
type Format = (typeof FORMATS)[number];

const settings = resolveCloudEvents({ topics: {}, source: 'https://payments.example.com/outbox' }, 'temporal_outbox');
const encodings: Record<Format, CloudEventsEncoding | undefined> = { plain: undefined, binary: { mode: 'binary', settings }, structured: { mode: 'structured', settings } };

/** Rows as the relay reads them: a payment_confirmed payload of the demo's size, a trace context on each. */
function pendingRows(): PendingRow[] {
  return Array.from({ length: EVENTS }, (_, i) => {
    const eventId = `0193a5b2-7c1d-7e4f-8a9b-${String(i).padStart(12, '0')}`;
    return {
      id: 1_000_000 + i,
      eventType: 'payment_confirmed',
      messageKey: String(i % 1000),
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
      createdAt: '2026-12-06T07:00:00.123Z',
      attempts: 0,
      payloadKind: 'object',
      eventId,
      payloadType: 'payment_confirmed',
      value: JSON.stringify({ type: 'payment_confirmed', amount: 500, event_id: eventId, account_id: i % 1000, payment_id: `pay-${i}` }),
    };
  });
}

/** CPU µs per event of `work` over every item, garbage collection included. */
function cpuMicrosPerEvent<T>(items: readonly T[], work: (item: T) => unknown): number {
  const before = process.cpuUsage();
  let sink = 0;
  for (const item of items) if (work(item)) sink++;
  const used = process.cpuUsage(before);
  if (sink !== items.length) throw new Error(`${items.length - sink} of ${items.length} events failed`);
  return +((used.user + used.system) / items.length).toFixed(3);
}

function received(message: OutboxKafkaMessage): RawMessage {
  return { value: Buffer.from(message.value), headers: Object.fromEntries(Object.entries(message.headers).map(([k, v]) => [k, Buffer.from(v)])) };
}

async function main() {
  const rows = pendingRows();
  const messages = Object.fromEntries(
    FORMATS.map((format) => [
      format,
      rows.map((row) => {
        const check = toKafkaMessage(row, 1_000_000, encodings[format]);
        if (!check.ok) throw new Error(check.reason);
        return received(check.message);
      }),
    ]),
  ) as Record<Format, RawMessage[]>;
  const bytes = Object.fromEntries(FORMATS.map((f) => [f, Math.round(messages[f].reduce((n, m) => n + m.value!.length + Object.entries(m.headers!).reduce((h, [k, v]) => h + k.length + (v as Buffer).length, 0), 0) / EVENTS)])) as Record<Format, number>;

  const relay: Record<Format, number[]> = { plain: [], binary: [], structured: [] };
  const consumer: Record<Format, number[]> = { plain: [], binary: [], structured: [] };
  const encode = (format: Format) => cpuMicrosPerEvent(rows, (row) => toKafkaMessage(row, 1_000_000, encodings[format]).ok);
  const decode = (format: Format) => cpuMicrosPerEvent(messages[format], (m) => validateEnvelope(m).ok);
  // Warm every path up before timing anything.
  for (const format of FORMATS) {
    encode(format);
    decode(format);
  }
  for (let r = 0; r < ROUNDS; r++) {
    const order = FORMATS.map((_, i) => FORMATS[(i + r) % FORMATS.length]!);
    for (const format of order) relay[format].push(encode(format));
    for (const format of order) consumer[format].push(decode(format));
  }

  const summary = FORMATS.map((f) => ({ format: f, relayMicros: median(relay[f]), consumerMicros: median(consumer[f]), bytesPerMessage: bytes[f] }));
  console.log(`CloudEvents vs the plain format, CPU µs per event, median of ${ROUNDS} rounds of ${EVENTS} events:`);
  for (const s of summary) console.log(`  ${s.format.padEnd(10)} relay build ${s.relayMicros} µs, consumer read ${s.consumerMicros} µs, ${s.bytesPerMessage} bytes of value + headers`);
  const written = await saveBenchmark({
    name: process.env.BENCH_NAME ?? 'cloudevents',
    command: commandLine('bench:cloudevents'),
    settings: { events: EVENTS, rounds: ROUNDS, order: 'formats rotated each round', measure: 'process.cpuUsage user + system per event' },
    results: { summary, runs: { relay, consumer } },
    chart: {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: 'CloudEvents vs plain: CPU µs per event (median)',
      data: { values: summary.flatMap((s) => [{ format: s.format, path: 'relay build', micros: s.relayMicros }, { format: s.format, path: 'consumer read', micros: s.consumerMicros }]) },
      mark: 'bar',
      encoding: {
        x: { field: 'format', type: 'nominal', title: 'format', sort: [...FORMATS] },
        xOffset: { field: 'path' },
        y: { field: 'micros', type: 'quantitative', title: 'CPU µs per event', scale: { zero: true } },
        color: { field: 'path', type: 'nominal', title: 'path' },
      },
      width: 400,
      height: 260,
    },
  });
  console.log(`saved: ${written.join(', ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

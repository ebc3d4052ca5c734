import { performance } from 'node:perf_hooks';
import type { SchemaRegistryClient } from '../../src/formats/registry/client';
import { decodeFramedValues } from '../../src/formats/registry/consumer-decoding';
import { RegistryDecoder } from '../../src/formats/registry/decoder';
import { RegistryEncoder } from '../../src/formats/registry/encoder';
import { encodeWithRegistry } from '../../src/formats/registry/relay-encoding';
import type { RegistryFormat } from '../../src/formats/registry/settings';
import { validateEnvelope, type RawMessage } from '../../src/inbox/validate-envelope';
import { toKafkaMessage } from '../../src/outbox/kafka-message';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';
import { commandLine, median, saveBenchmark } from './support/report';

// What each value format costs per event, in this process, with no broker and no registry round
// trip (the relay and the consumer ask the registry once per topic and type, or per schema id, and
// cache the answer): the relay's side (the outbox row to the Kafka message: toKafkaMessage, then the
// registry call-out) and the consumer's side (the Kafka message to the validated payload: the
// registry call-out, then the envelope check), for plain JSON, Avro and JSON Schema, alternating
// so all three see the same machine.
// Run: npm run bench:formats   (≈ 20 s; BENCH_ROUNDS=N, 15 by default)

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const EVENTS = 2_000;
const BATCHES_PER_ROUND = 10;
const TOPIC = 'payments.events';
const FORMATS = ['json', 'avro', 'json-schema'] as const;
type Format = (typeof FORMATS)[number];

const CREDIT_AVRO = JSON.stringify({
  type: 'record',
  name: 'PaymentConfirmed',
  fields: ['event_id', 'type', 'account_id', 'amount', 'currency', 'note'].map((name) => ({ name, type: 'string' })),
});
const CREDIT_JSON_SCHEMA = JSON.stringify({ type: 'object', title: 'PaymentConfirmed' });

/** Answers from memory what a registry would answer once (the hot path never asks it); `latest` gives the format's schema. */
function inMemoryRegistry(format: RegistryFormat = 'avro'): SchemaRegistryClient {
  const schemas = new Map<number, { schema: string; schemaType: 'AVRO' | 'JSON' }>([
    [1, { schema: CREDIT_AVRO, schemaType: 'AVRO' }],
    [2, { schema: CREDIT_JSON_SCHEMA, schemaType: 'JSON' }],
  ]);
  const id = format === 'avro' ? 1 : 2;
  return { register: async () => id, latest: async () => ({ id, ...schemas.get(id)! }), byId: async (n: number) => ({ id: n, ...schemas.get(n)! }) } as unknown as SchemaRegistryClient;
}

function rows(): PendingRow[] {
  return Array.from({ length: EVENTS }, (_, i) => {
    const payload = { event_id: `evt-00000000-0000-0000-0000-${String(i).padStart(12, '0')}`, type: 'payment_confirmed', account_id: '123', amount: '500', currency: 'EUR', note: 'x'.repeat(20) };
    return { id: i + 1, eventType: 'payment_confirmed', messageKey: null, headers: {}, createdAt: new Date().toISOString(), attempts: 0, payloadKind: 'object', eventId: payload.event_id, payloadType: payload.type, value: JSON.stringify(payload) };
  });
}

function encoderFor(format: Format): RegistryEncoder | undefined {
  if (format === 'json') return undefined;
  const topics: Record<string, RegistryFormat> = { [TOPIC]: format };
  return new RegistryEncoder({ url: 'http://in-memory', topics, subjectNaming: 'topic', requestTimeoutMs: 1_000 }, undefined, inMemoryRegistry(format));
}

/** The relay's side for one batch: the messages as they go to the producer. */
async function relaySide(encoder: RegistryEncoder | undefined, batch: PendingRow[]): Promise<RawMessage[]> {
  const items = batch.map((row) => {
    const check = toKafkaMessage(row, 1_000_000);
    if (!check.ok) throw new Error(check.reason);
    return { row, message: check.message, bytes: check.bytes };
  });
  const { sendable, refused } = await encodeWithRegistry(encoder, items, () => TOPIC, 1_000_000);
  if (refused.length > 0) throw new Error(refused[0]!.reason);
  return sendable.map((s) => ({ value: Buffer.isBuffer(s.message.value) ? s.message.value : Buffer.from(s.message.value), headers: s.message.headers }));
}

/** The consumer's side for one chunk: what consume-batch does before the handler's own check. */
async function consumerSide(decoder: RegistryDecoder | undefined, messages: RawMessage[]): Promise<number> {
  const decoded = await decodeFramedValues(decoder, TOPIC, messages);
  let valid = 0;
  for (const [i, message] of messages.entries()) if ((decoded?.[i] ?? validateEnvelope(message)).ok) valid++;
  if (valid !== messages.length) throw new Error(`only ${valid} of ${messages.length} decoded`);
  return valid;
}

async function timed(work: (batch: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  for (let b = 0; b < BATCHES_PER_ROUND; b++) await work(b);
  return +(((performance.now() - started) * 1000) / (BATCHES_PER_ROUND * EVENTS)).toFixed(3);
}

async function main() {
  const encoders = Object.fromEntries(FORMATS.map((f) => [f, encoderFor(f)])) as Record<Format, RegistryEncoder | undefined>;
  const decoder = new RegistryDecoder({ url: 'http://in-memory', requestTimeoutMs: 1_000 }, inMemoryRegistry());
  const wire = {} as Record<Format, RawMessage[]>;
  const bytes = {} as Record<Format, number>;
  for (const f of FORMATS) {
    wire[f] = await relaySide(encoders[f], rows());
    bytes[f] = (wire[f][0]!.value as Buffer).length;
  }
  const relayRuns = Object.fromEntries(FORMATS.map((f) => [f, [] as number[]])) as Record<Format, number[]>;
  const consumerRuns = Object.fromEntries(FORMATS.map((f) => [f, [] as number[]])) as Record<Format, number[]>;
  for (let r = 0; r <= ROUNDS; r++) {
    const order = r % 2 === 0 ? FORMATS : [...FORMATS].reverse();
    for (const f of order) {
      // Fresh rows per batch, made outside the timing: the relay call-out frames messages in place.
      const batches = Array.from({ length: BATCHES_PER_ROUND }, rows);
      const relay = await timed((b) => relaySide(encoders[f], batches[b]!));
      const consumer = await timed(() => consumerSide(f === 'json' ? undefined : decoder, wire[f]));
      // Round 0 warms every path up and is not counted.
      if (r > 0) {
        relayRuns[f].push(relay);
        consumerRuns[f].push(consumer);
      }
    }
  }
  const results = Object.fromEntries(
    FORMATS.map((f) => {
      const relay = median(relayRuns[f]);
      const consumer = median(consumerRuns[f]);
      return [f, { relayMicrosPerEvent: relay, consumerMicrosPerEvent: consumer, relayEventsPerSecond: Math.round(1e6 / relay), consumerEventsPerSecond: Math.round(1e6 / consumer), valueBytes: bytes[f] }];
    }),
  );
  console.log(`per event, median of ${ROUNDS} rounds of ${BATCHES_PER_ROUND} batches of ${EVENTS} (one core, no broker, registry answers cached):`);
  for (const f of FORMATS) {
    const x = results[f]!;
    console.log(`  ${f.padEnd(11)} relay ${x.relayMicrosPerEvent} µs (${x.relayEventsPerSecond}/s)  consumer ${x.consumerMicrosPerEvent} µs (${x.consumerEventsPerSecond}/s)  value ${x.valueBytes} bytes`);
  }
  const written = await saveBenchmark({
    name: process.env.BENCH_NAME ?? 'formats',
    command: commandLine('bench:formats'),
    settings: { eventsPerBatch: EVENTS, batchesPerRound: BATCHES_PER_ROUND, rounds: ROUNDS, order: 'alternating, reversed each round', payloadFields: 6 },
    results: { ...results, runs: { relay: relayRuns, consumer: consumerRuns } },
  });
  console.log(`saved: ${written.join(', ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

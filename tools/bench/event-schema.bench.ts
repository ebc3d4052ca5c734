import { performance } from 'node:perf_hooks';
import { defineEventCatalog } from '../../src/events/catalog';
import { validateEnvelope } from '../../src/inbox/validate-envelope';
import { toKafkaMessage } from '../../src/outbox/kafka-message';
import type { PendingRow } from '../../src/outbox/queries/read-pending-rows';
import { schemaRefusal } from '../../activities/relay/schema-refusal';
import { paymentConfirmedHandler } from '../../examples/payments/credit-handler';
import { PaymentConfirmed } from '../../examples/payments/event-types';
import { commandLine, median, saveBenchmark } from './support/report';

// What checking events against their type costs per event, in this process, with no broker or
// database: the relay's per-row step (toKafkaMessage) without and with the catalog (which parses
// the row and runs the schema), and the consumer's per-message step (the envelope) without and
// with the payments type's schema (the handler's validate). Alternating, so both variants see
// the same machine. The end-to-end figures are the relay and consumer benchmarks'.
// Run: npx tsx tools/bench/event-schema.bench.ts   (≈ 20 s; BENCH_ROUNDS=N, 20 by default)

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const EVENTS = 20_000;

const rows: PendingRow[] = Array.from({ length: EVENTS }, (_, i) => ({
  id: i + 1,
  eventType: 'payment_confirmed',
  messageKey: String(i % 500),
  headers: {},
  createdAt: new Date().toISOString(),
  attempts: 0,
  payloadKind: 'object',
  eventId: `evt-${i}`,
  payloadType: 'payment_confirmed',
  value: JSON.stringify({ event_id: `evt-${i}`, type: 'payment_confirmed', account_id: 1 + (i % 500), amount: 100 + i }),
}));
const messages = rows.map((r) => ({ value: Buffer.from(r.value), headers: { 'event-id': Buffer.from(r.eventId!), 'event-type': Buffer.from('payment_confirmed') } }));
const catalog = defineEventCatalog([PaymentConfirmed]);
const handler = paymentConfirmedHandler({ maxCreditAmount: 100_000_000_000 });
const context = { header: () => undefined };

const variants = {
  'relay, plain JSON': () => {
    for (const row of rows) if (!toKafkaMessage(row, 1_000_000).ok) throw new Error('refused');
  },
  'relay, with the catalog': () => {
    for (const row of rows) {
      const check = toKafkaMessage(row, 1_000_000);
      if (!check.ok || schemaRefusal(catalog, row, check.message) !== undefined) throw new Error('refused');
    }
  },
  'consumer, envelope only': () => {
    for (const m of messages) if (!validateEnvelope(m).ok) throw new Error('refused');
  },
  'consumer, envelope + schema': () => {
    for (const m of messages) {
      const envelope = validateEnvelope(m);
      if (!envelope.ok || !handler.validate(envelope.payload, context).ok) throw new Error('refused');
    }
  },
};
type Variant = keyof typeof variants;

async function main() {
  const runs = Object.fromEntries(Object.keys(variants).map((k) => [k, [] as number[]])) as Record<Variant, number[]>;
  for (const run of Object.values(variants)) run();
  for (let r = 0; r < ROUNDS; r++) {
    const names = Object.keys(variants) as Variant[];
    for (const name of r % 2 === 0 ? names : names.reverse()) {
      const started = performance.now();
      variants[name]();
      runs[name].push(+(((performance.now() - started) * 1000) / EVENTS).toFixed(3));
    }
  }
  const medians = Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)])) as Record<Variant, number>;
  console.log(`µs per event (CPU on this thread), median of ${ROUNDS} rounds of ${EVENTS} payment_confirmed events:`);
  for (const [name, value] of Object.entries(medians)) console.log(`  ${name.padEnd(30)} ${value} µs  (${Math.round(1e6 / value).toLocaleString('en')} events/s on one core)`);
  const written = await saveBenchmark({
    name: process.env.BENCH_NAME ?? 'event-schema',
    command: commandLine('bench:event-schema'),
    settings: { events: EVENTS, rounds: ROUNDS, type: 'payment_confirmed v1', order: 'all variants each round, reversed every other round' },
    results: { microsPerEventMedian: medians, runs },
  });
  console.log(`saved: ${written.join(', ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

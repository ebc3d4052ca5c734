import { performance } from 'node:perf_hooks';
import { kafkajsOwnMembers, LEAN_MEMBERS, useEncoderMembers, type EncoderMembers } from '../../src/kafka/lean-encoder';
import { HEADERS } from '../../src/kafka/message-format';
import { commandLine, median, saveBenchmark } from './support/report';

// kafkajs's produce-request encoding alone, in this process, with no broker: the relay's batch
// (2,000 messages of a ≈ 150-byte payload, a key and the four contract headers, over 6 partitions)
// encoded by kafkajs's own encoder and by the lean one (src/kafka/lean-encoder.ts), alternating, so
// both see the same machine. It isolates the change that `npm run bench:relay` measures end to end
// (KAFKAJS_LEAN_ENCODER=false there runs the relay without it).
// Run: npm run bench:kafka-encode   (≈ 30 s; BENCH_ROUNDS=N, 20 by default)

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const REQUESTS_PER_ROUND = 50;
const MESSAGES = 2_000;
const PARTITIONS = 6;

type ProduceRequest = (input: object) => { encode(): Promise<{ buffer: Buffer }> };

// eslint-disable-next-line @typescript-eslint/no-require-imports
const produceRequest = require('kafkajs/src/protocol/requests/produce/v3/request') as ProduceRequest;

function relayBatch() {
  const value = JSON.stringify({ event_id: 'evt-00000000-0000-0000-0000-000000000000', type: 'payment_confirmed', account_id: '123', amount: '500', currency: 'EUR', note: 'x'.repeat(20) });
  const partitions = Array.from({ length: PARTITIONS }, (_, partition) => ({
    partition,
    firstSequence: 0,
    messages: Array.from({ length: MESSAGES / PARTITIONS }, (_, i) => ({
      key: String(partition * 1000 + (i % 100)),
      value,
      headers: { [HEADERS.eventId]: `evt-${partition}-${i}`, [HEADERS.eventType]: 'payment_confirmed', [HEADERS.createdAt]: new Date().toISOString(), [HEADERS.outboxId]: String(1_000_000 + i) },
    })),
  }));
  return { acks: -1, timeout: 30_000, topicData: [{ topic: 'payments.events', partitions }] };
}

/** Wall-clock µs per message over REQUESTS_PER_ROUND requests encoded back to back on this thread, garbage collection included. */
async function round(members: EncoderMembers, batch: object): Promise<{ microsPerMessage: number; bytes: number }> {
  useEncoderMembers(members);
  let bytes = 0;
  const started = performance.now();
  for (let i = 0; i < REQUESTS_PER_ROUND; i++) bytes = (await produceRequest(batch).encode()).buffer.length;
  const ms = performance.now() - started;
  return { microsPerMessage: +((ms * 1000) / (REQUESTS_PER_ROUND * MESSAGES)).toFixed(3), bytes };
}

async function main() {
  const batch = relayBatch();
  const variants: Record<'kafkajs' | 'lean', EncoderMembers> = { kafkajs: kafkajsOwnMembers(), lean: LEAN_MEMBERS };
  const runs: Record<keyof typeof variants, number[]> = { kafkajs: [], lean: [] };
  const sizes = new Set<number>();
  // Warm both paths up before timing anything.
  for (const members of Object.values(variants)) await round(members, batch);
  for (let r = 0; r < ROUNDS; r++) {
    const order = (r % 2 === 0 ? ['kafkajs', 'lean'] : ['lean', 'kafkajs']) as (keyof typeof variants)[];
    for (const name of order) {
      const result = await round(variants[name], batch);
      runs[name].push(result.microsPerMessage);
      sizes.add(result.bytes);
    }
  }
  useEncoderMembers(variants.kafkajs);
  if (sizes.size !== 1) throw new Error(`the two encoders produced requests of different sizes: ${[...sizes].join(', ')}`);
  const kafkajs = median(runs.kafkajs);
  const lean = median(runs.lean);
  const speedup = +(kafkajs / lean).toFixed(2);
  console.log(`produce request of ${MESSAGES} messages (${[...sizes][0]} bytes), µs per message, median of ${ROUNDS} rounds of ${REQUESTS_PER_ROUND} requests:`);
  console.log(`  kafkajs's own encoder ${kafkajs} µs, the lean encoder ${lean} µs: ${speedup}× faster encoding`);
  const written = await saveBenchmark({
    name: process.env.BENCH_NAME ?? 'kafka-encode',
    command: commandLine('bench:kafka-encode'),
    settings: { messages: MESSAGES, partitions: PARTITIONS, headersPerMessage: 4, requestsPerRound: REQUESTS_PER_ROUND, rounds: ROUNDS, order: 'alternating, first variant swapped each round' },
    results: { microsPerMessageMedian: { kafkajs, lean }, speedup, requestBytes: [...sizes][0], runs },
    chart: {
      $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
      title: `kafkajs produce-request encoding, ${MESSAGES} messages with 4 headers: µs per message per round`,
      data: { values: Object.entries(runs).flatMap(([writer, values]) => values.map((v, roundIndex) => ({ encoder: writer, round: roundIndex + 1, microsPerMessage: v }))) },
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'round', type: 'quantitative', title: 'round' },
        y: { field: 'microsPerMessage', type: 'quantitative', title: 'µs per message', scale: { zero: true } },
        color: { field: 'encoder', type: 'nominal', title: 'encoder' },
      },
      width: 600,
      height: 300,
    },
  });
  console.log(`saved: ${written.join(', ')}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});

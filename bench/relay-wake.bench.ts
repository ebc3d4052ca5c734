import { startRelays } from '../outbox/relay-control';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { uniqueName } from '../testkit/ids';
import { createTestTopic } from '../testkit/kafka';
import { relayTestConfig, startInProcessRelay } from '../testkit/relay-harness';
import { testTemporalClient } from '../testkit/temporal';
import { median, percentile, saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';

// A burst after a pause: how long the first events of a burst wait when the relay has been idle.
// A shard's session stays for 2 s after its last row (the drain grace, workflows/relay.ts); after a
// longer pause the shard is in its idle wait, and the burst's first rows wait for the wake: the
// wait's activity returning, a workflow task, a new session (its connection, its first poll).
// The relay at its defaults (8 shards, relay sessions, batch 2,000) runs in this process; each
// burst is 1,000 events/s for 2 s (10 per transaction every 10 ms) after a pause of 0.5 s (the
// session still there), 3 s or 10 s (the shards idle), interleaved. Per burst: commit → marked
// (published_at − created_at: after the Kafka ack) for the whole burst and for its first 200 ms.
// Run: npm run bench:relay-wake   (about 2 minutes; BENCH_REPEATS=3, BENCH_PAUSES_MS=500,3000,10000)

const PAUSES_MS = (process.env.BENCH_PAUSES_MS ?? '500,3000,10000').split(',').map(Number);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const SHARDS = 8;
const BURST_MS = 2_000;
const TICK_MS = 10;
const PER_TICK = 10;
const FIRST_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function burst(db: TestDatabase, tag: string): Promise<number> {
  const t0 = Date.now();
  const inserts: Promise<unknown>[] = [];
  for (let tick = 0; tick * TICK_MS < BURST_MS; tick++) {
    const due = t0 + tick * TICK_MS;
    if (due > Date.now()) await sleep(due - Date.now());
    const events = Array.from({ length: PER_TICK }, (_, k) => JSON.stringify({ event_id: `${tag}-${tick}-${k}`, account_id: (tick * PER_TICK + k) % 100, amount: 1 }));
    inserts.push(db.pool.query(`INSERT INTO outbox_events (event_type, payload) SELECT 'payment_confirmed', e FROM unnest($1::jsonb[]) AS e`, [events]));
  }
  await Promise.all(inserts);
  return t0;
}

async function waitPublished(db: TestDatabase): Promise<void> {
  for (;;) {
    const { rows } = await db.pool.query(`SELECT EXISTS (SELECT 1 FROM outbox_events WHERE published_at IS NULL AND parked_at IS NULL) AS left`);
    if (!rows[0].left) return;
    await sleep(50);
  }
}

/** commit → marked of one burst's events, all of them and those committed in its first FIRST_MS. */
async function burstLatency(db: TestDatabase, tag: string, t0: number) {
  const { rows } = await db.pool.query<{ first: boolean; ms: number }>(
    `SELECT extract(epoch FROM created_at) * 1000 < $2::float8 + ${FIRST_MS} AS first, extract(epoch FROM published_at - created_at) * 1000 AS ms
       FROM outbox_events WHERE payload->>'event_id' LIKE $1`,
    [`${tag}-%`, t0],
  );
  const pct = (values: number[], p: number) => Math.round(percentile([...values].sort((a, b) => a - b), p));
  const all = rows.map((r) => Number(r.ms));
  const first = rows.filter((r) => r.first).map((r) => Number(r.ms));
  return { events: all.length, p50Ms: pct(all, 50), p99Ms: pct(all, 99), maxMs: pct(all, 100), firstEvents: first.length, firstP50Ms: pct(first, 50), firstMaxMs: pct(first, 100) };
}

async function main() {
  const temporal = await testTemporalClient();
  const db = await createTestDatabase();
  const topic = await createTestTopic(6);
  const config = relayTestConfig(db.url, topic.topic);
  const prefix = uniqueName('bench-wake');
  const relay = await startInProcessRelay(config);
  try {
    await startRelays({ client: temporal.client, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: config.relay.batchSize, workflowId: (i) => `${prefix}-${i}` }, SHARDS);
    // Unrecorded: the first burst after a start pays for cold code and connections.
    await waitPublished(db);
    await burst(db, 'warm-up');
    await waitPublished(db);
    const order = Array.from({ length: REPEATS }, (_, r) => (r % 2 === 0 ? PAUSES_MS : [...PAUSES_MS].reverse())).flat();
    const bursts: ({ pauseMs: number } & Awaited<ReturnType<typeof burstLatency>>)[] = [];
    for (const [i, pauseMs] of order.entries()) {
      await sleep(pauseMs);
      const tag = `b${i}`;
      const t0 = await burst(db, tag);
      await waitPublished(db);
      const latency = { pauseMs, ...(await burstLatency(db, tag, t0)) };
      bursts.push(latency);
      console.log(`pause ${pauseMs} ms: commit → marked p50 ${latency.p50Ms} / p99 ${latency.p99Ms} / max ${latency.maxMs} ms; first ${FIRST_MS} ms of the burst (${latency.firstEvents} events): p50 ${latency.firstP50Ms} / max ${latency.firstMaxMs} ms`);
    }
    const byPause = PAUSES_MS.map((pauseMs) => {
      const of = bursts.filter((b) => b.pauseMs === pauseMs);
      return { pauseMs, medianFirstMaxMs: median(of.map((b) => b.firstMaxMs)), medianP99Ms: median(of.map((b) => b.p99Ms)), firstMaxMs: of.map((b) => b.firstMaxMs), p99Ms: of.map((b) => b.p99Ms) };
    });
    for (const p of byPause) console.log(`pause ${p.pauseMs} ms, medians of ${REPEATS}: first ${FIRST_MS} ms max ${p.medianFirstMaxMs} ms, burst p99 ${p.medianP99Ms} ms`);
    const written = await saveBenchmark({
      name: process.env.BENCH_NAME ?? 'relay-wake',
      command: 'npm run bench:relay-wake',
      settings: { shards: SHARDS, batchSize: config.relay.batchSize, pausesMs: PAUSES_MS, repeats: REPEATS, order, burstMs: BURST_MS, eventsPerSecond: (PER_TICK * 1000) / TICK_MS, firstMs: FIRST_MS, note: 'commit → marked (published_at − created_at), the mark after the Kafka ack; relay in the benchmark process' },
      results: { byPause, bursts },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `A burst after a pause: commit → marked of its first ${FIRST_MS} ms (max per burst) and of the whole burst (p99)`,
        data: { values: bursts.flatMap((b) => [{ pauseMs: b.pauseMs, ms: b.firstMaxMs, series: `first ${FIRST_MS} ms, max` }, { pauseMs: b.pauseMs, ms: b.p99Ms, series: 'whole burst, p99' }]) },
        mark: { type: 'point', filled: true, opacity: 0.7 },
        encoding: {
          x: { field: 'pauseMs', type: 'ordinal', title: 'pause before the burst (ms)', axis: { labelAngle: 0 } },
          y: { field: 'ms', type: 'quantitative', title: 'commit → marked (ms)' },
          color: { field: 'series', type: 'nominal', title: null, legend: { orient: 'bottom' } },
          xOffset: { field: 'series' },
        },
        width: 420,
        height: 280,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    await relay.close();
    for (let i = 0; i < SHARDS; i++) await temporal.client.workflow.getHandle(`${prefix}-${i}`).terminate('benchmark over').catch(() => undefined);
    await temporal.connection.close();
    await topic.remove();
    await db.drop();
  }
}

runBenchmark(main);

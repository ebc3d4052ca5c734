import { configuredRelayControl, startRelays, stopRelays } from '../../src/outbox/relay-control';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';
import { uniqueName } from '../../test/kit/ids';
import { createTestTopic } from '../../test/kit/kafka';
import { relayTestConfig, startInProcessRelay } from '../../test/kit/relay-harness';
import { testTemporalClient } from '../../test/kit/temporal';
import { commandLine, median, percentile, saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';

// A burst after a pause, and a trickle: what a relay's drain grace (how long a drained session
// waits for more rows before the shard goes to its idle wait, RelayShardInput.drainGraceMs) buys.
// After a pause longer than the grace the shard is in its idle wait, and the first rows wait for
// the wake: the wait's activity returning, a workflow task, a new session (its connection, its
// first poll). The relay at its defaults (8 shards, relay sessions, batch 2,000) runs in this
// process; each grace setting gets its own shard workflows, and the settings take turns (A B,
// B A, A B). Under each setting:
// - bursts of 1,000 events/s for 2 s (10 per transaction every 10 ms) after each pause, commit →
//   marked (published_at − created_at: after the Kafka ack) for the whole burst and its first 200 ms;
// - a trickle, one transaction of 10 events every 4 s for 60 s: commit → marked, the shards'
//   history events and the database sessions opened, per minute.
// Run: npm run bench:relay-wake   (about 14 minutes; BENCH_REPEATS=3, BENCH_GRACES_MS=2000,10000,
// BENCH_PAUSES_MS=500,3000,8000,30000, BENCH_TRICKLE_MS=60000)

const GRACES_MS = (process.env.BENCH_GRACES_MS ?? '2000,10000').split(',').map(Number);
const PAUSES_MS = (process.env.BENCH_PAUSES_MS ?? '500,3000,8000,30000').split(',').map(Number);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const TRICKLE_MS = Number(process.env.BENCH_TRICKLE_MS ?? 60_000);
const TRICKLE_EVERY_MS = 4_000;
const SHARDS = 8;
const BURST_MS = 2_000;
const TICK_MS = 10;
const PER_TICK = 10;
const FIRST_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function insertTick(db: TestDatabase, tag: string, tick: number) {
  const events = Array.from({ length: PER_TICK }, (_, k) => JSON.stringify({ event_id: `${tag}-${tick}-${k}`, account_id: (tick * PER_TICK + k) % 100, amount: 1 }));
  return db.pool.query(`INSERT INTO temporal_outbox.outbox_events (event_type, payload) SELECT 'payment_confirmed', e FROM unnest($1::jsonb[]) AS e`, [events]);
}

/** Transactions of PER_TICK events every `everyMs` for `forMs`, on schedule; resolves with the start time once all committed. */
async function offer(db: TestDatabase, tag: string, forMs: number, everyMs: number): Promise<number> {
  const t0 = Date.now();
  const inserts: Promise<unknown>[] = [];
  for (let tick = 0; tick * everyMs < forMs; tick++) {
    const due = t0 + tick * everyMs;
    if (due > Date.now()) await sleep(due - Date.now());
    inserts.push(insertTick(db, tag, tick));
  }
  await Promise.all(inserts);
  return t0;
}

async function waitPublished(db: TestDatabase): Promise<void> {
  for (;;) {
    const { rows } = await db.pool.query(`SELECT EXISTS (SELECT 1 FROM temporal_outbox.outbox_events WHERE published_at IS NULL AND parked_at IS NULL) AS left`);
    if (!rows[0].left) return;
    await sleep(50);
  }
}

/** commit → marked of one burst's events, all of them and those committed in its first FIRST_MS. */
async function burstLatency(db: TestDatabase, tag: string, t0: number) {
  const { rows } = await db.pool.query<{ first: boolean; ms: number }>(
    `SELECT extract(epoch FROM created_at) * 1000 < $2::float8 + ${FIRST_MS} AS first, extract(epoch FROM published_at - created_at) * 1000 AS ms
       FROM temporal_outbox.outbox_events WHERE payload->>'event_id' LIKE $1`,
    [`${tag}-%`, t0],
  );
  const pct = (values: number[], p: number) => Math.round(percentile([...values].sort((a, b) => a - b), p));
  const all = rows.map((r) => Number(r.ms));
  const first = rows.filter((r) => r.first).map((r) => Number(r.ms));
  return { events: all.length, p50Ms: pct(all, 50), p99Ms: pct(all, 99), maxMs: pct(all, 100), firstEvents: first.length, firstP50Ms: pct(first, 50), firstMaxMs: pct(first, 100) };
}

/** Database sessions ever opened to the benchmark's database (PostgreSQL 14+), from the statistics views. */
async function sessionsOpened(db: TestDatabase): Promise<number> {
  await db.pool.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await db.pool.query<{ sessions: string }>(`SELECT sessions FROM pg_stat_database WHERE datname = current_database()`);
  return Number(rows[0]!.sessions);
}

type Burst = { graceMs: number; repeat: number; pauseMs: number } & Awaited<ReturnType<typeof burstLatency>>;
interface Trickle {
  graceMs: number;
  repeat: number;
  events: number;
  p50Ms: number;
  maxMs: number;
  historyEventsPerMinutePerShard: number[];
  databaseSessionsPerMinute: number;
}

async function main() {
  const temporal = await testTemporalClient();
  const db = await createTestDatabase();
  const topic = await createTestTopic(6);
  const config = relayTestConfig(db.url, topic.topic);
  const prefix = uniqueName('bench-wake');
  const relay = await startInProcessRelay(config);
  const started: string[] = [];
  const bursts: Burst[] = [];
  const trickles: Trickle[] = [];

  /** One grace setting's turn: its own shard workflows, the bursts after each pause, the trickle; stopped at the end. */
  async function turn(graceMs: number, repeat: number) {
    const workflowId = (i: number) => `${prefix}-grace${graceMs}-r${repeat}-${i}`;
    const control = configuredRelayControl(config, temporal.client, db.pool, { drainGraceMs: graceMs, workflowId });
    await startRelays(control, SHARDS);
    started.push(...Array.from({ length: SHARDS }, (_, i) => workflowId(i)));
    try {
      // Unrecorded: the first burst after a start pays for new workflows, sessions and connections.
      await offer(db, `g${graceMs}-r${repeat}-warm-up`, BURST_MS, TICK_MS);
      await waitPublished(db);
      const pauses = repeat % 2 === 0 ? PAUSES_MS : [...PAUSES_MS].reverse();
      for (const pauseMs of pauses) {
        await sleep(pauseMs);
        const tag = `g${graceMs}-r${repeat}-p${pauseMs}`;
        const t0 = await offer(db, tag, BURST_MS, TICK_MS);
        await waitPublished(db);
        const latency: Burst = { graceMs, repeat, pauseMs, ...(await burstLatency(db, tag, t0)) };
        bursts.push(latency);
        console.log(`grace ${graceMs} ms, pause ${pauseMs} ms: commit → marked p50 ${latency.p50Ms} / p99 ${latency.p99Ms} / max ${latency.maxMs} ms; first ${FIRST_MS} ms (${latency.firstEvents} events): max ${latency.firstMaxMs} ms`);
      }
      // The trickle starts from idle under every setting.
      await sleep(Math.max(...GRACES_MS) + 1_000);
      const historyLengths = () => Promise.all(Array.from({ length: SHARDS }, async (_, i) => Number((await temporal.client.workflow.getHandle(workflowId(i)).describe()).historyLength)));
      const [h0, s0] = [await historyLengths(), await sessionsOpened(db)];
      const tag = `g${graceMs}-r${repeat}-trickle`;
      const t0 = await offer(db, tag, TRICKLE_MS, TRICKLE_EVERY_MS);
      await sleep(Math.max(0, t0 + TRICKLE_MS - Date.now()));
      await waitPublished(db);
      const [h1, s1] = [await historyLengths(), await sessionsOpened(db)];
      const minutes = (Date.now() - t0) / 60_000;
      const latency = await burstLatency(db, tag, t0);
      const trickle: Trickle = {
        graceMs,
        repeat,
        events: latency.events,
        p50Ms: latency.p50Ms,
        maxMs: latency.maxMs,
        historyEventsPerMinutePerShard: h1.map((h, i) => Math.round((h - h0[i]!) / minutes)),
        databaseSessionsPerMinute: Math.round((s1 - s0) / minutes),
      };
      trickles.push(trickle);
      console.log(`grace ${graceMs} ms, trickle (10 events every ${TRICKLE_EVERY_MS / 1000} s): commit → marked p50 ${trickle.p50Ms} / max ${trickle.maxMs} ms; history events per minute per shard ${trickle.historyEventsPerMinutePerShard.join(' ')}; database sessions opened per minute ${trickle.databaseSessionsPerMinute}`);
    } finally {
      await stopRelays(control, SHARDS, 60_000);
    }
  }

  try {
    const order = Array.from({ length: REPEATS }, (_, r) => (r % 2 === 0 ? GRACES_MS : [...GRACES_MS].reverse()).map((graceMs) => ({ graceMs, repeat: r + 1 }))).flat();
    for (const { graceMs, repeat } of order) await turn(graceMs, repeat);

    const byGrace = GRACES_MS.map((graceMs) => {
      const mine = bursts.filter((b) => b.graceMs === graceMs);
      const myTrickles = trickles.filter((t) => t.graceMs === graceMs);
      return {
        graceMs,
        byPause: PAUSES_MS.map((pauseMs) => {
          const of = mine.filter((b) => b.pauseMs === pauseMs);
          return { pauseMs, medianFirstMaxMs: median(of.map((b) => b.firstMaxMs)), medianP99Ms: median(of.map((b) => b.p99Ms)), firstMaxMs: of.map((b) => b.firstMaxMs), p99Ms: of.map((b) => b.p99Ms) };
        }),
        trickle: {
          medianP50Ms: median(myTrickles.map((t) => t.p50Ms)),
          medianMaxMs: median(myTrickles.map((t) => t.maxMs)),
          medianHistoryEventsPerMinutePerShard: median(myTrickles.flatMap((t) => t.historyEventsPerMinutePerShard)),
          medianDatabaseSessionsPerMinute: median(myTrickles.map((t) => t.databaseSessionsPerMinute)),
        },
      };
    });
    for (const g of byGrace) {
      for (const p of g.byPause) console.log(`grace ${g.graceMs} ms, pause ${p.pauseMs} ms, medians of ${REPEATS}: first ${FIRST_MS} ms max ${p.medianFirstMaxMs} ms, burst p99 ${p.medianP99Ms} ms`);
      console.log(`grace ${g.graceMs} ms, trickle, medians of ${REPEATS}: commit → marked p50 ${g.trickle.medianP50Ms} / max ${g.trickle.medianMaxMs} ms, ${g.trickle.medianHistoryEventsPerMinutePerShard} history events per minute per shard, ${g.trickle.medianDatabaseSessionsPerMinute} database sessions opened per minute`);
    }
    const written = await saveBenchmark({
      name: process.env.BENCH_NAME ?? 'relay-wake',
      command: commandLine('bench:relay-wake'),
      settings: {
        shards: SHARDS,
        batchSize: config.relay.batchSize,
        gracesMs: GRACES_MS,
        pausesMs: PAUSES_MS,
        repeats: REPEATS,
        order: order.map((o) => `grace ${o.graceMs} ms`),
        burstMs: BURST_MS,
        eventsPerSecond: (PER_TICK * 1000) / TICK_MS,
        firstMs: FIRST_MS,
        trickle: `${PER_TICK} events every ${TRICKLE_EVERY_MS} ms for ${TRICKLE_MS} ms, from idle`,
        note: 'commit → marked (published_at − created_at), the mark after the Kafka ack; relay in the benchmark process; database sessions counted for the benchmark database (the relay and the benchmark pool)',
      },
      results: { byGrace, bursts, trickles },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `A burst after a pause: the slowest commit → marked of its first ${FIRST_MS} ms, by drain grace`,
        data: { values: bursts.map((b) => ({ pauseMs: b.pauseMs, ms: b.firstMaxMs, grace: `grace ${b.graceMs / 1000} s` })) },
        mark: { type: 'point', filled: true, opacity: 0.7 },
        encoding: {
          x: { field: 'pauseMs', type: 'ordinal', title: 'pause before the burst (ms)', axis: { labelAngle: 0 } },
          y: { field: 'ms', type: 'quantitative', title: `commit → marked, max of the first ${FIRST_MS} ms (ms)` },
          color: { field: 'grace', type: 'nominal', title: null, legend: { orient: 'bottom' } },
          xOffset: { field: 'grace' },
        },
        width: 480,
        height: 280,
      },
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    await relay.close();
    for (const id of started) await temporal.client.workflow.getHandle(id).terminate('benchmark over').catch(() => undefined);
    await temporal.connection.close();
    await topic.remove();
    await db.drop();
  }
}

runBenchmark(main);

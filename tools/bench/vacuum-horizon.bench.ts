import '../local-stack/apply-stack-env';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client as TemporalClient, Connection } from '@temporalio/client';
import type { Kafka } from 'kafkajs';
import { Client } from 'pg';
import { startWorkerEntry, stopChildWorkers, type ChildWorker } from '../local-stack/child-processes';
import { waitForPollers } from '../local-stack/wait-for-workers';
import { loadStackConfig, type StackConfig as Config } from '../local-stack/stack-config';
import { HEADERS } from '../../src/kafka/message-format';
import { createKafka } from '../../src/kafka/client';
import { ensureTopics } from '../../src/kafka/topics';
import { FETCH_PENDING_IDS_SQL, FROM_THE_BEGINNING } from '../../src/outbox/queries/fetch-pending-ids';
import { startRelays } from '../../src/outbox/relay-control';
import { createTestTopic, deleteTopics } from '../../test/kit/kafka';
import { startInProcessRelay, type InProcessRelay } from '../../test/kit/relay-harness';
import { median, percentile, saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';
import { uniqueName } from '../../test/kit/ids';
import { vacuumHorizonChart } from './support/vacuum-horizon-chart';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';
import { exampleConsumerEntry } from '../../examples/payments/worker-entries';

// The relay and the consumer while vacuum is held back (issue 12): the same flow of events twice,
// once with nothing else running and once with one REPEATABLE READ transaction held open in the
// outbox's database the whole time, so no row version that dies during the run can be removed.
// Reported side by side: relay and consumer throughput per step, the relay's own poll on a
// drained shard at every step (and, for comparison, the poll from the beginning that the relay
// used to run on every call and now runs only as its periodic full scan), and latency at 1,000
// events/s at the end (commit → on Kafka, commit → credited).
//   npm run bench:vacuum-horizon                       (1,000,000 events, steps of 100,000)
//   npm run bench:vacuum-horizon -- --events 200000    (quick)
// The two runs (with and without the held transaction) go side by side in two lanes that take
// turns, so a busy machine slows both alike.

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    step: { type: 'string', default: '100000' },
    'latency-seconds': { type: 'string', default: '15' },
    'latency-rounds': { type: 'string', default: '2' },
  },
});
const EVENTS = Number(args.events);
const STEP = Number(args.step);
const LATENCY_SECONDS = Number(args['latency-seconds']);
const LATENCY_ROUNDS = Number(args['latency-rounds']);
const SHARDS = 2;
const BATCH = 2000;
const ACCOUNTS = 1000;
const INSERT_CHUNK = 10_000;
const POLL_SAMPLES = 5;

type Mode = 'no-hold' | 'hold';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface StepResult {
  events: number;
  size: number;
  relayEventsPerSecond: number;
  consumerEventsPerSecond: number;
  /** The relay's poll statement from its own bound (server execution time), worst shard, median of POLL_SAMPLES. */
  relayPollMs: number;
  /** The same statement from the beginning (the relay before issue 12; now its periodic full scan). */
  fromBeginningPollMs: number;
  /** The whole fetch activity as the relay calls it (layout check, poll, lock read if any), client-side, worst shard. */
  fetchActivityMs: number;
  /** How far past the start each shard's bound is (ids). */
  bounds: number[];
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

/** Server-side execution time of the relay's poll statement (EXPLAIN ANALYZE, TIMING OFF). */
async function executionMs(db: TestDatabase, params: number[]): Promise<number> {
  const { rows } = await db.pool.query(`EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) ${FETCH_PENDING_IDS_SQL}`, params);
  return rows[0]['QUERY PLAN'][0]['Execution Time'] as number;
}

async function timeMs(work: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/** One side of the comparison: its own scratch database, topic, relay worker and consumer worker. */
interface Lane {
  mode: Mode;
  db: TestDatabase;
  topic: string;
  relay: InProcessRelay;
  consumer: ChildWorker;
  relayIds: string[];
  inserted: number;
  steps: StepResult[];
  latencyRounds: LatencySamples[];
  holder?: Client;
}

interface LatencySamples {
  toKafkaMs: number[];
  creditedMs: number[];
}

async function openLane(mode: Mode, base: Config, kafka: Kafka, temporal: TemporalClient): Promise<Lane> {
  const db = await createTestDatabase({ serverUrl: base.database.url, prefix: `bench_vacuum_${mode.replace('-', '_')}` });
  const topic = (await createTestTopic(6, { prefix: `bench-vacuum-${mode}`, logAppendTime: true, kafka })).topic;
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    KAFKA_TOPIC: topic,
    KAFKA_DEAD_LETTER_TOPIC: `${topic}.dlq`,
    CONSUMER_GROUP: uniqueName(`bench-vacuum-${mode}`),
    RELAY_TASK_QUEUE: uniqueName(`bench-vacuum-relay-${mode}`),
    CONSUMER_TASK_QUEUE: uniqueName(`bench-vacuum-credit-${mode}`),
    LOG_LEVEL: 'warn',
  };
  const config = loadStackConfig(env);
  await ensureTopics(kafka, config, [config.kafka.deadLetterTopic]);
  await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
  const consumer = startWorkerEntry(`consumer-worker-${mode}`, exampleConsumerEntry(), path.join(config.local.cacheDir, 'logs', 'bench-vacuum-horizon'), env);
  const relay = await startInProcessRelay(config);
  const relayIds = Array.from({ length: SHARDS }, (_, i) => uniqueName(`bench-vacuum-${mode}-shard-${i}`));
  await waitForPollers(temporal, [config.relay.taskQueue!, config.consumer.taskQueue!], 180_000);
  await startRelays({ client: temporal, db: db.pool, taskQueue: config.relay.taskQueue!, batchSize: BATCH, workflowId: (i) => relayIds[i]! }, SHARDS);
  return { mode, db, topic, relay, consumer, relayIds, inserted: 0, steps: [], latencyRounds: [] };
}

/** Holds vacuum back in this lane's database only: a horizon is per database for its own tables. */
async function holdSnapshot(lane: Lane) {
  lane.holder = new Client({ connectionString: lane.db.url, application_name: 'bench-held-snapshot' });
  await lane.holder.connect();
  await lane.holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  await lane.holder.query('SELECT count(*) FROM temporal_outbox.outbox_events');
}

async function closeLane(lane: Lane, kafka: Kafka, temporal: TemporalClient) {
  await lane.holder?.query('ROLLBACK').catch(() => undefined);
  await lane.holder?.end().catch(() => undefined);
  for (const id of lane.relayIds) await temporal.workflow.getHandle(id).terminate('benchmark over').catch(() => undefined);
  await lane.relay.close();
  await stopChildWorkers([lane.consumer], 5000);
  await lane.db.drop();
  await deleteTopics([lane.topic, `${lane.topic}.dlq`], kafka);
}

/** Writes `size` events into the lane and waits until they are published and credited. */
async function runStep(lane: Lane, size: number): Promise<StepResult> {
  const { db, relay } = lane;
  const stepStart = performance.now();
  for (let from = lane.inserted + 1; from <= lane.inserted + size; from += INSERT_CHUNK) {
    const to = Math.min(from + INSERT_CHUNK - 1, lane.inserted + size);
    await db.pool.query(
      `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
       SELECT 'payment_confirmed', jsonb_build_object('event_id', 'flow-' || g, 'type', 'payment_confirmed', 'account_id', 1 + g % $3::int, 'amount', 1)
         FROM generate_series($1::int, $2::int) g`,
      [from, to, ACCOUNTS],
    );
  }
  lane.inserted += size;
  // Each shard publishes in id order: its last row published means the shard is drained.
  const { rows: lastIds } = await db.pool.query<{ id: string }>(
    `SELECT max(id) AS id FROM temporal_outbox.outbox_events GROUP BY (shard_hash & 2147483647) % $1::int`,
    [SHARDS],
  );
  await waitFor('relay drained', async () => (await db.pool.query(`SELECT 1 FROM temporal_outbox.outbox_events WHERE id = ANY($1::bigint[]) AND published_at IS NULL`, [lastIds.map((r) => r.id)])).rowCount === 0, 600_000, 100);
  const relaySeconds = (performance.now() - stepStart) / 1000;
  const credited = lane.inserted;
  await waitFor('credits applied', async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE 'flow-%'`)).rows[0].n) >= credited, 900_000, 250);
  const consumerSeconds = (performance.now() - stepStart) / 1000;

  // The relay's own poll on its drained shards: the statement from the relay worker's bound
  // (server-side execution time: the machine is shared, client-side timing is mostly queueing
  // for a CPU), and the whole fetch activity as the relay calls it.
  const relayPoll: number[] = [];
  const fromBeginning: number[] = [];
  const fetchActivity: number[] = [];
  const bounds: number[] = [];
  for (let shardIndex = 0; shardIndex < SHARDS; shardIndex++) {
    const fetch = () => relay.activities.fetchPendingBatch({ shardIndex, shardCount: SHARDS, limit: BATCH, countBacklog: false });
    await fetch();
    const bound = relay.bounds.forShard(SHARDS, shardIndex).snapshot.trusted;
    bounds.push(bound);
    const samples = { relay: [] as number[], full: [] as number[], fetch: [] as number[] };
    for (let i = 0; i < POLL_SAMPLES; i++) {
      samples.relay.push(await executionMs(db, [SHARDS, shardIndex, BATCH, bound]));
      samples.full.push(await executionMs(db, [SHARDS, shardIndex, BATCH, FROM_THE_BEGINNING]));
      samples.fetch.push(await timeMs(fetch));
    }
    relayPoll.push(median(samples.relay));
    fromBeginning.push(median(samples.full));
    fetchActivity.push(median(samples.fetch));
  }
  const step: StepResult = {
    events: lane.inserted,
    size,
    relayEventsPerSecond: Math.round(size / relaySeconds),
    consumerEventsPerSecond: Math.round(size / consumerSeconds),
    relayPollMs: +Math.max(...relayPoll).toFixed(3),
    fromBeginningPollMs: +Math.max(...fromBeginning).toFixed(3),
    fetchActivityMs: +Math.max(...fetchActivity).toFixed(3),
    bounds,
  };
  lane.steps.push(step);
  console.log(
    `[${lane.mode}] ${step.events.toLocaleString('en-US')} events: relay ${step.relayEventsPerSecond}/s, credits ${step.consumerEventsPerSecond}/s; ` +
      `relay poll ${step.relayPollMs} ms (fetch activity ${step.fetchActivityMs} ms), poll from the beginning ${step.fromBeginningPollMs} ms (load ${os.loadavg()[0]!.toFixed(2)})`,
  );
  return step;
}

/** 10 events per transaction every 10 ms; commit time taken by the client after COMMIT returns. */
async function latencyRound(lane: Lane, kafka: Kafka, round: number): Promise<LatencySamples> {
  const { db, topic } = lane;
  const prefix = `lat${round}-`;
  const appendedAt = new Map<string, number>();
  const committedAt = new Map<string, number>();
  const listener = kafka.consumer({ groupId: uniqueName('bench-vacuum-latency'), sessionTimeout: 10_000, maxWaitTimeInMs: 20 });
  await listener.connect();
  try {
    await listener.subscribe({ topic, fromBeginning: false });
    await listener.run({
      eachMessage: async ({ message }) => {
        const id = message.headers?.[HEADERS.eventId]?.toString();
        if (id?.startsWith(prefix) && !appendedAt.has(id)) appendedAt.set(id, Number(message.timestamp));
      },
    });
    await sleep(5000); // joined and assigned before the measured events are written
    const perTx = 10;
    const total = 1000 * LATENCY_SECONDS;
    const start = Date.now();
    const inflight: Promise<void>[] = [];
    for (let sent = 0, tick = 0; sent < total; sent += perTx, tick++) {
      const due = start + tick * 10;
      if (due > Date.now()) await sleep(due - Date.now());
      const ids = Array.from({ length: perTx }, (_, k) => `${prefix}${tick}-${k}`);
      inflight.push(
        db.pool
          .query(
            `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
             SELECT 'payment_confirmed', jsonb_build_object('event_id', e, 'type', 'payment_confirmed', 'account_id', 1 + (random() * ($2::int - 1))::int, 'amount', 1) FROM unnest($1::text[]) e`,
            [ids, ACCOUNTS],
          )
          .then(() => {
            const now = Date.now();
            for (const id of ids) committedAt.set(id, now);
          }),
      );
    }
    await Promise.all(inflight);
    await waitFor('latency events on Kafka', async () => appendedAt.size >= total, 120_000, 200);
    await waitFor('latency events credited', async () => Number((await db.pool.query(`SELECT count(*) AS n FROM temporal_outbox.inbox_processed_events WHERE event_id LIKE $1`, [`${prefix}%`])).rows[0].n) >= total, 120_000, 250);
    const toKafkaMs = [...committedAt].map(([id, c]) => appendedAt.get(id)! - c);
    const { rows } = await db.pool.query<{ ms: number }>(
      `SELECT extract(epoch FROM i.processed_at - o.created_at) * 1000 AS ms
         FROM temporal_outbox.outbox_events o JOIN temporal_outbox.inbox_processed_events i ON i.event_id = o.payload->>'event_id'
        WHERE o.payload->>'event_id' LIKE $1`,
      [`${prefix}%`],
    );
    const samples = { toKafkaMs, creditedMs: rows.map((r) => Number(r.ms)) };
    lane.latencyRounds.push(samples);
    const p = (values: number[], q: number) => Math.round(percentile([...values].sort((a, b) => a - b), q));
    console.log(`[${lane.mode}] latency round ${round} at 1,000/s: commit → on Kafka p50 ${p(toKafkaMs, 50)} / p99 ${p(toKafkaMs, 99)} ms; commit → credited p50 ${p(samples.creditedMs, 50)} / p99 ${p(samples.creditedMs, 99)} ms`);
    return samples;
  } finally {
    await listener.disconnect().catch(() => undefined);
  }
}

/** A lane's figures over all its steps and latency rounds. */
function summarise(lane: Lane) {
  const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
  const summary = (values: number[]) => {
    const s = sorted(values);
    return { events: s.length, p50Ms: Math.round(percentile(s, 50)), p99Ms: Math.round(percentile(s, 99)), maxMs: Math.round(s.at(-1)!) };
  };
  const relaySecondsTotal = lane.steps.reduce((s, x) => s + x.size / x.relayEventsPerSecond, 0);
  const consumerSecondsTotal = lane.steps.reduce((s, x) => s + x.size / x.consumerEventsPerSecond, 0);
  return {
    mode: lane.mode,
    steps: lane.steps,
    relayEventsPerSecond: Math.round(lane.inserted / relaySecondsTotal),
    consumerEventsPerSecond: Math.round(lane.inserted / consumerSecondsTotal),
    maxRelayPollMs: Math.max(...lane.steps.map((s) => s.relayPollMs)),
    maxFromBeginningPollMs: Math.max(...lane.steps.map((s) => s.fromBeginningPollMs)),
    latency: {
      offeredPerSecond: 1000,
      secondsPerRound: LATENCY_SECONDS,
      rounds: lane.latencyRounds.map((r) => ({ kafka: summary(r.toKafkaMs), credited: summary(r.creditedMs) })),
      kafka: summary(lane.latencyRounds.flatMap((r) => r.toKafkaMs)),
      credited: summary(lane.latencyRounds.flatMap((r) => r.creditedMs)),
    },
  };
}

runBenchmark(async () => {
  const base = loadStackConfig();
  const kafka = createKafka(base, 'bench-vacuum-horizon');
  const connection = await Connection.connect({ address: base.temporal.address });
  const temporal = new TemporalClient({ connection, namespace: base.temporal.namespace });
  const loadAtStart = os.loadavg().map((l) => +l.toFixed(2));
  const lanes: Lane[] = [];
  try {
    // Both lanes run side by side and take turns, step by step (ABBA order), so that whatever else
    // the shared machine is doing weighs on both alike; the comparison is per step.
    const noHoldLane = await openLane('no-hold', base, kafka, temporal);
    lanes.push(noHoldLane);
    const holdLane = await openLane('hold', base, kafka, temporal);
    lanes.push(holdLane);
    await holdSnapshot(holdLane);
    for (let k = 0; noHoldLane.inserted < EVENTS; k++) {
      const size = Math.min(STEP, EVENTS - noHoldLane.inserted);
      for (const lane of k % 2 === 0 ? [noHoldLane, holdLane] : [holdLane, noHoldLane]) await runStep(lane, size);
    }
    for (let round = 0; round < LATENCY_ROUNDS; round++) {
      for (const lane of round % 2 === 0 ? [noHoldLane, holdLane] : [holdLane, noHoldLane]) await latencyRound(lane, kafka, round);
    }
    const noHold = summarise(noHoldLane);
    const hold = summarise(holdLane);
    const stepRatios = (pick: (s: StepResult) => number) => noHold.steps.map((s, i) => pick(hold.steps[i]!) / pick(s));
    const ratio = (a: number, b: number) => +(a / b).toFixed(3);
    const comparison = {
      relayThroughputHoldOverNoHold: ratio(hold.relayEventsPerSecond, noHold.relayEventsPerSecond),
      consumerThroughputHoldOverNoHold: ratio(hold.consumerEventsPerSecond, noHold.consumerEventsPerSecond),
      relayThroughputHoldOverNoHoldMedianOfSteps: +median(stepRatios((s) => s.relayEventsPerSecond)).toFixed(3),
      consumerThroughputHoldOverNoHoldMedianOfSteps: +median(stepRatios((s) => s.consumerEventsPerSecond)).toFixed(3),
      kafkaP99HoldOverNoHoldPerRound: hold.latency.rounds.map((r, i) => ratio(r.kafka.p99Ms, noHold.latency.rounds[i]!.kafka.p99Ms)),
      kafkaP99HoldOverNoHold: ratio(hold.latency.kafka.p99Ms, noHold.latency.kafka.p99Ms),
      creditedP99HoldOverNoHold: ratio(hold.latency.credited.p99Ms, noHold.latency.credited.p99Ms),
      maxRelayPollMsHold: hold.maxRelayPollMs,
      maxRelayPollMsNoHold: noHold.maxRelayPollMs,
    };
    console.log(`relay ${noHold.relayEventsPerSecond}/s → ${hold.relayEventsPerSecond}/s held (×${comparison.relayThroughputHoldOverNoHold}); credits ${noHold.consumerEventsPerSecond}/s → ${hold.consumerEventsPerSecond}/s (×${comparison.consumerThroughputHoldOverNoHold})`);
    console.log(`commit → Kafka p99 ${noHold.latency.kafka.p99Ms} → ${hold.latency.kafka.p99Ms} ms; commit → credited p99 ${noHold.latency.credited.p99Ms} → ${hold.latency.credited.p99Ms} ms; relay poll ≤ ${hold.maxRelayPollMs} ms held (from the beginning: ${hold.maxFromBeginningPollMs} ms)`);
    const name = EVENTS === 1_000_000 ? 'vacuum-horizon' : `vacuum-horizon-${EVENTS}`;
    const written = await saveBenchmark({
      name,
      command: `npm run bench:vacuum-horizon -- --events ${EVENTS} --step ${STEP} --latency-seconds ${LATENCY_SECONDS} --latency-rounds ${LATENCY_ROUNDS}`,
      settings: {
        events: EVENTS,
        step: STEP,
        relayShards: SHARDS,
        relayBatchSize: BATCH,
        accounts: ACCOUNTS,
        insert: `${INSERT_CHUNK} events per INSERT, back to back, per step`,
        lanes: 'two lanes side by side, each with its own scratch database, topic, relay worker and consumer worker; they take turns step by step in ABBA order (and likewise for the latency rounds), so load from elsewhere weighs on both alike',
        relayWorker: 'in the benchmark process (so its own fetch activity can be timed); consumer worker: a child process per lane',
        hold: "one REPEATABLE READ transaction (BEGIN; SELECT count(*) FROM temporal_outbox.outbox_events) open in the hold lane's scratch database for the whole run (a vacuum horizon is per database for ordinary tables, so the other lane is not held)",
        throughput: 'per step: events / seconds from the first INSERT of the step until its last row is published (relay) or credited (consumer)',
        relayPoll: `on each drained shard, median of ${POLL_SAMPLES}, worst shard: the relay's poll statement from the relay worker's own bound and from the beginning (EXPLAIN ANALYZE execution time), and the whole fetch activity (client-side)`,
        latency: `${LATENCY_ROUNDS} rounds per lane of 1,000 events/s for ${LATENCY_SECONDS} s after the flow, 10 events per transaction; on Kafka = broker LogAppendTime - client time after COMMIT; credited = inbox processed_at - outbox created_at (both PostgreSQL)`,
        loadAtStart,
        loadAtEnd: os.loadavg().map((l) => +l.toFixed(2)),
        machine: 'shared: other work ran on the same 2 cores (see load); compare the lanes, not absolute figures',
      },
      results: { comparison, noHold, hold },
      chart: vacuumHorizonChart(EVENTS, [noHold, hold]),
    });
    console.log(`saved: ${written.join(', ')}`);
  } finally {
    for (const lane of lanes) await closeLane(lane, kafka, temporal).catch((error) => console.error(`closing the ${lane.mode} lane: ${error}`));
    await connection.close();
  }
});

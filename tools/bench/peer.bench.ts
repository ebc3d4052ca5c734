import '../local-stack/apply-stack-env';
import crypto from 'node:crypto';
import os from 'node:os';
import { Client, Connection } from '@temporalio/client';
import { Kafka, logLevel } from 'kafkajs';
import { loadStackConfig } from '../local-stack/stack-config';
import { createTestTopic, deleteTopics } from '../../test/kit/kafka';
import { measureCpu, postmasterPidOf } from './support/cpu-usage';
import { logicalCapableCluster } from './support/logical-cluster';
import { joinLatencies, offerLoad } from './support/offered-load';
import { insertBacklog, waitDrained } from './support/outbox-backlog';
import { createPeerOutbox, createPeerReplication, createPeerSlot, dropPeerSlot, insertPeerBacklog, insertPeerEvents, peerAnyPending, peerPendingCount, type PeerOutboxNames } from './support/peer/peer-outbox';
import { PeerListenerProcess } from './support/peer/peer-listener-process';
import { Relays, relayDefaults } from './support/relay-shards';
import { RelayWorkerProcess } from '../../test/kit/relay-worker-process';
import { percentile, saveBenchmark } from './support/report';
import { runBenchmark } from './support/run-benchmark';
import { uniqueName } from '../../test/kit/ids';
import { createTestDatabase, type TestDatabase } from '../../test/kit/database';
import { summarisePeerRuns, type ContenderRun } from './support/peer/peer-summary';

// A peer in the same run: the npm package pg-transactional-outbox (its logical-replication
// listener when the server has wal_level=logical, and its polling listener) against our relay at
// its default settings, on the same PostgreSQL server, the same event shape
// ({event_id, type, account_id, amount}, the account as key) and the same offered load,
// interleaved (the order rotates every repeat), reported as ratios of medians:
//   throughput  EVENTS committed in 10,000-row transactions while the listener/relay runs;
//               until all are processed (ours: Kafka ack with acks=all, then marked published;
//               the peer: its publisher called, then the row marked processed)
//   latency     1,000 events/s offered (10 per transaction every 10 ms): commit → on Kafka for
//               ours (broker append time); commit → the peer's publisher called. The peer has no
//               broker in its path: its figures are for a publisher that does nothing.
//   CPU         per event during the throughput runs: the worker/listener process, the
//               benchmark cluster's PostgreSQL, and (ours only) Kafka and the Temporal dev server
// Run: npm run bench:peer   (full: ~15 minutes; BENCH_QUICK=1: about a minute)

const quick = process.env.BENCH_QUICK === '1';
const REPEATS = Number(process.env.BENCH_REPEATS ?? (quick ? 1 : 3));
const EVENTS = Number(process.env.BENCH_EVENTS ?? (quick ? 2_000 : 20_000));
const RATE = 1000;
const LATENCY_SECONDS = quick ? 3 : 10;
/** A listener that has not drained by then is measured on what it processed (and says so). */
const DRAIN_CAP_MS = (quick ? 20 : 45) * 1000;
/** The package's default polling batch size (5) and a larger one, in case that is its best. */
const POLLING_BATCHES = quick ? [5] : [5, 50];
const ACCOUNTS = 1000;

const config = loadStackConfig();
const kafka = new Kafka({ clientId: `peer-bench-${process.pid}`, brokers: config.kafka.brokers, logLevel: logLevel.NOTHING });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadAverage = () => os.loadavg().map((l) => +l.toFixed(2));
const log = (m: string) => console.log(m);

type Contender = { name: string; kind: 'ours' } | { name: string; kind: 'replication' } | { name: string; kind: 'polling'; batchSize: number };

interface Bench {
  db: TestDatabase;
  client: Client;
  worker: RelayWorkerProcess;
  taskQueue: string;
  names: PeerOutboxNames;
  postmasterPid?: number;
  /** Broker append time per event id, filled by one consumer for the whole run. */
  appendedAt: Map<string, number>;
}

const ourDefaults = relayDefaults(config);

/** Waits until the peer processed every row, or the deadline; returns the rows still unprocessed. */
async function untilPeerDrained(b: Bench, deadline: number): Promise<number> {
  for (;;) {
    if (!(await peerAnyPending(b.db.pool, b.names.table))) return 0;
    if (Date.now() > deadline) return peerPendingCount(b.db.pool, b.names.table);
    await sleep(25);
  }
}

/** Starts the peer listener (a fresh slot for the replication one), warmed up on 100 events. */
async function startPeer(b: Bench, c: Extract<Contender, { kind: 'replication' | 'polling' }>): Promise<PeerListenerProcess> {
  await b.db.pool.query(`TRUNCATE public.${b.names.table}`);
  const slot = `${b.names.slot}_${crypto.randomBytes(3).toString('hex')}`;
  if (c.kind === 'replication') await createPeerSlot(b.db.pool, slot);
  const listener = new PeerListenerProcess({ ...b.names, slot, kind: c.kind, databaseUrl: b.db.url, batchSize: c.kind === 'polling' ? c.batchSize : 5 });
  await listener.waitStarted();
  await insertPeerBacklog(b.db.pool, b.names.table, 100);
  if ((await untilPeerDrained(b, Date.now() + 60_000)) > 0) throw new Error(`${c.name}: warm-up not processed in 60 s:\n${listener.stderr}`);
  await sleep(300);
  return listener;
}

async function stopPeer(b: Bench, listener: PeerListenerProcess): Promise<void> {
  await listener.stop();
  if (listener.errorLines > 0) console.log(`  ${listener.options.kind} listener logged ${listener.errorLines} errors while running; last: ${listener.lastErrors.at(-1)}`);
  if (listener.options.kind === 'replication') await dropPeerSlot(b.db.pool, listener.options.slot);
}

async function throughputRun(b: Bench, c: Contender, repeat: number): Promise<ContenderRun> {
  if (c.kind === 'ours') {
    const relays = new Relays(b.client, b.taskQueue);
    try {
      await b.db.pool.query(`TRUNCATE temporal_outbox.outbox_events; UPDATE temporal_outbox.outbox_relay_layout SET shard_count = NULL`);
      await relays.start(ourDefaults);
      await insertBacklog(b.db, 100);
      await waitDrained(b.db, 60_000, 'warm-up');
      await sleep(300);
      const cpu = measureCpu(() => [b.worker.child.pid!], { workerLabel: 'worker', postmasterPid: b.postmasterPid });
      const t0 = Date.now();
      await insertBacklog(b.db, EVENTS);
      await waitDrained(b.db, DRAIN_CAP_MS * 3, `${c.name} throughput`);
      const seconds = (Date.now() - t0) / 1000;
      return { contender: c.name, repeat, test: 'throughput', events: EVENTS, processed: EVENTS, seconds: +seconds.toFixed(2), eventsPerSecond: Math.round(EVENTS / seconds), cpu: cpu.stop(), loadAverage1m: loadAverage()[0]! };
    } finally {
      await relays.stop();
    }
  }
  const listener = await startPeer(b, c);
  try {
    const cpu = measureCpu(() => [listener.child.pid!], { workerLabel: 'worker', postmasterPid: b.postmasterPid });
    const t0 = Date.now();
    await insertPeerBacklog(b.db.pool, b.names.table, EVENTS);
    const pending = await untilPeerDrained(b, t0 + DRAIN_CAP_MS);
    const seconds = (Date.now() - t0) / 1000;
    const processed = EVENTS - pending;
    return { contender: c.name, repeat, test: 'throughput', events: EVENTS, processed, listenerErrors: listener.errorLines, seconds: +seconds.toFixed(2), eventsPerSecond: Math.round(processed / seconds), cpu: cpu.stop(), loadAverage1m: loadAverage()[0]! };
  } finally {
    await stopPeer(b, listener);
  }
}

const accountOf = () => Math.floor(Math.random() * ACCOUNTS);

async function latencyRun(b: Bench, c: Contender, repeat: number): Promise<ContenderRun> {
  let arrivedAt: Map<string, number>;
  let load: Awaited<ReturnType<typeof offerLoad>>;
  let errors: number | undefined;
  if (c.kind === 'ours') {
    const relays = new Relays(b.client, b.taskQueue);
    try {
      await b.db.pool.query(`TRUNCATE temporal_outbox.outbox_events; UPDATE temporal_outbox.outbox_relay_layout SET shard_count = NULL`);
      await relays.start(ourDefaults);
      await insertBacklog(b.db, 10);
      await waitDrained(b.db, 60_000, 'warm-up');
      await sleep(1000);
      load = await offerLoad({
        rate: RATE,
        seconds: LATENCY_SECONDS,
        commit: (ids) =>
          b.db.pool.query(
            `INSERT INTO temporal_outbox.outbox_events (event_type, payload)
             SELECT 'payment_confirmed', jsonb_build_object('event_id', id, 'type', 'payment_confirmed', 'account_id', a, 'amount', 1)
               FROM unnest($1::text[], $2::int[]) AS t(id, a)`,
            [ids, ids.map(accountOf)],
          ),
      });
      await waitDrained(b.db, DRAIN_CAP_MS, `${c.name} latency`);
      const ids = [...load.committedAt.keys()];
      for (let waited = 0; ids.some((id) => !b.appendedAt.has(id)) && waited < 30_000; waited += 200) await sleep(200);
      arrivedAt = b.appendedAt;
    } finally {
      await relays.stop();
    }
  } else {
    const listener = await startPeer(b, c);
    try {
      await sleep(700);
      load = await offerLoad({ rate: RATE, seconds: LATENCY_SECONDS, commit: (ids) => insertPeerEvents(b.db.pool, b.names.table, ids, accountOf) });
      await untilPeerDrained(b, Date.now() + DRAIN_CAP_MS);
    } finally {
      await stopPeer(b, listener);
    }
    arrivedAt = listener.handledAt;
    errors = listener.errorLines;
  }
  const sorted = joinLatencies(load.committedAt, arrivedAt);
  return {
    contender: c.name,
    repeat,
    test: 'latency',
    events: load.total,
    processed: sorted.length,
    offeredPerSecond: load.offeredPerSecond,
    p50Ms: percentile(sorted, 50),
    p90Ms: percentile(sorted, 90),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1),
    ...(errors === undefined ? {} : { listenerErrors: errors }),
    loadAverage1m: loadAverage()[0]!,
  };
}

function describe(r: ContenderRun): string {
  if (r.test === 'throughput') {
    const cpu = r.cpu!.cpuSeconds;
    return `${r.eventsPerSecond} events/s (${r.processed}/${r.events} in ${r.seconds} s; cpu s: ${Object.entries(cpu).map(([g, s]) => `${g} ${s}`).join(', ')}; load ${r.loadAverage1m})`;
  }
  return `p50 ${r.p50Ms} ms, p90 ${r.p90Ms} ms, p99 ${r.p99Ms} ms, max ${r.maxMs} ms (${r.processed}/${r.events} at ${r.offeredPerSecond}/s offered; load ${r.loadAverage1m})`;
}

async function main() {
  const loadAtStart = loadAverage();
  const startedAt = Date.now();
  console.log(`peer benchmark: load average ${loadAtStart.join(' ')} on ${os.cpus().length} cores${quick ? ' (quick)' : ''}`);
  const cluster = await logicalCapableCluster(log);
  const db = await createTestDatabase({ serverUrl: cluster.url, prefix: 'bench_peer' });
  const url = new URL(db.url);
  const suffix = crypto.randomBytes(3).toString('hex');
  const names: PeerOutboxNames = { table: 'peer_outbox', publication: `peer_outbox_pub_${suffix}`, slot: `peer_outbox_slot_${suffix}`, nextMessagesFunction: 'next_peer_outbox_messages' };
  await createPeerOutbox(db.pool, url.pathname.slice(1), url.username, names);
  const canReplicate = cluster.walLevel === 'logical';
  if (canReplicate) await createPeerReplication(db.pool, url.pathname.slice(1), url.username, names);
  else console.log(`skipping pg-transactional-outbox's logical-replication listener: the server runs with wal_level=${cluster.walLevel}`);

  const topic = (await createTestTopic(6, { prefix: 'bench-peer', logAppendTime: true, kafka })).topic;
  const taskQueue = uniqueName('bench-peer-tq');
  const worker = new RelayWorkerProcess({ DATABASE_URL: db.url, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: taskQueue });
  const connection = await Connection.connect({ address: config.temporal.address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const appendedAt = new Map<string, number>();
  // Interrupted (Ctrl-C, or the suite stopped): end the processes and the scratch cluster this
  // run started, which the finally below would otherwise never reach.
  const abort = () => {
    worker.child.kill('SIGKILL');
    for (const l of PeerListenerProcess.running) l.child.kill('SIGKILL');
    void cluster.stop().finally(() => process.exit(130));
  };
  process.once('SIGINT', abort).once('SIGTERM', abort);
  const consumer = kafka.consumer({ groupId: uniqueName('bench-peer-latency'), sessionTimeout: 10_000, maxWaitTimeInMs: 20 });
  try {
    // Bundling the workflows takes a few seconds on a quiet machine, minutes on a loaded one.
    await worker.waitUntilRunning(300_000);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: false });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const id = message.headers?.['event-id']?.toString();
        // LogAppendTime topic: the timestamp is the broker's append time; the first delivery counts.
        if (id && !appendedAt.has(id)) appendedAt.set(id, Number(message.timestamp));
      },
    });
    await sleep(3000);
    const b: Bench = { db, client, worker, taskQueue, names, postmasterPid: await postmasterPidOf(db.pool), appendedAt };
    const contenders: Contender[] = [
      { name: 'temporal-outbox relay', kind: 'ours' },
      ...(canReplicate ? [{ name: 'peer logical replication', kind: 'replication' as const }] : []),
      ...POLLING_BATCHES.map((batchSize) => ({ name: `peer polling, batch ${batchSize}`, kind: 'polling' as const, batchSize })),
    ];
    const runs: ContenderRun[] = [];
    for (let r = 0; r < REPEATS; r++) {
      // Rotate who goes first, so a drift in the machine's load does not favour one side.
      const order = contenders.map((_, i) => contenders[(i + r) % contenders.length]!);
      for (const test of ['throughput', 'latency'] as const) {
        for (const c of order) {
          const run = test === 'throughput' ? await throughputRun(b, c, r) : await latencyRun(b, c, r);
          console.log(`${test.padEnd(10)} ${c.name.padEnd(26)} ${describe(run)}`);
          runs.push(run);
        }
      }
    }
    const summary = summarisePeerRuns(runs, contenders[0]!.name);
    console.log(`\nsummary (medians of ${REPEATS} runs; the peer has no broker in its path):`);
    for (const s of summary.contenders) {
      console.log(`  ${s.contender.padEnd(26)} ${s.eventsPerSecond}/s; p50 ${s.p50Ms} / p99 ${s.p99Ms} ms at 1,000/s; CPU ${s.cpuMicrosPerEvent.worker} µs/event in its process, ${s.cpuMicrosPerEvent.workerAndPostgres} with PostgreSQL, ${s.cpuMicrosPerEvent.all} with all it uses (ours: Kafka and Temporal too)`);
    }
    const q = summary.ratios;
    if (q) console.log(`  ratios against the peer's best: throughput ${q.throughput}× (goal ≥ 10×), p50 ${q.p50}× lower, p99 ${q.p99}× lower, CPU per event ${q.cpuWorkerAndPostgres}× less (process + PostgreSQL)`);
    const loadAtEnd = loadAverage();
    const written = await saveBenchmark({
      name: 'peer',
      command: quick ? 'BENCH_QUICK=1 npm run bench:peer' : 'npm run bench:peer',
      settings: {
        peer: 'pg-transactional-outbox 0.5.7 (npm)',
        events: EVENTS,
        repeats: REPEATS,
        latencyOffered: `${RATE} events/s for ${LATENCY_SECONDS} s, 10 events per transaction`,
        drainCapSeconds: DRAIN_CAP_MS / 1000,
        ours: { ...ourDefaults, note: 'the relay at its default settings (RELAY_SHARDS, RELAY_BATCH_SIZE, relay sessions), one worker process, Kafka acks=all, 6 partitions' },
        peerListeners: {
          replication: canReplicate ? 'initializeReplicationMessageListener, pgoutput slot (a fresh one per run), its default concurrency (one message at a time)' : `not run: wal_level=${cluster.walLevel}`,
          polling: `initializePollingMessageListener, its defaults (500 ms interval) with batch sizes ${POLLING_BATCHES.join(', ')}`,
          publisher: 'records the call time only: no broker in its path',
        },
        postgres: { origin: cluster.origin, walLevel: cluster.walLevel },
        loadAverageAtStart: loadAtStart,
        loadAverageAtEnd: loadAtEnd,
        minutes: +((Date.now() - startedAt) / 60_000).toFixed(1),
        note: 'one PostgreSQL server for both sides; Kafka and the Temporal dev server shared with other work on this 2-core machine (their CPU includes it)',
      },
      results: { summary, runs },
      chart: {
        $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
        title: `temporal-outbox vs pg-transactional-outbox, same run (medians of ${REPEATS}; the peer has no broker in its path)`,
        hconcat: [
          {
            title: `throughput, ${EVENTS} events (events/s)`,
            data: { values: summary.contenders.map((s) => ({ contender: s.contender, eventsPerSecond: s.eventsPerSecond })) },
            mark: 'bar',
            encoding: { x: { field: 'contender', type: 'nominal', title: null, axis: { labelAngle: -30 } }, y: { field: 'eventsPerSecond', type: 'quantitative', title: 'events/s' }, color: { field: 'contender', type: 'nominal', legend: null } },
            width: 240,
            height: 300,
          },
          {
            title: 'commit → delivered at 1,000 events/s (ms)',
            data: { values: summary.contenders.flatMap((s) => [{ contender: s.contender, stat: 'p50', ms: s.p50Ms }, { contender: s.contender, stat: 'p99', ms: s.p99Ms }]) },
            mark: 'bar',
            encoding: { x: { field: 'stat', type: 'nominal', title: null }, xOffset: { field: 'contender' }, y: { field: 'ms', type: 'quantitative', title: 'ms' }, color: { field: 'contender', type: 'nominal' } },
            width: 240,
            height: 300,
          },
          {
            title: 'CPU per event (µs)',
            data: { values: summary.contenders.flatMap((s) => Object.entries(s.cpuMicrosPerEventByGroup).map(([group, us]) => ({ contender: s.contender, group, us }))) },
            mark: 'bar',
            encoding: { x: { field: 'contender', type: 'nominal', title: null, axis: { labelAngle: -30 } }, y: { field: 'us', type: 'quantitative', title: 'µs per event', stack: 'zero' }, color: { field: 'group', type: 'nominal', title: 'process' } },
            width: 240,
            height: 300,
          },
        ],
      },
    });
    console.log(`saved: ${written.join(', ')} (${((Date.now() - startedAt) / 60_000).toFixed(1)} min)`);
  } finally {
    await consumer.disconnect().catch(() => undefined);
    await worker.kill9();
    await connection.close();
    await deleteTopics([topic], kafka);
    await db.drop();
    await cluster.stop();
  }
}

runBenchmark(main);

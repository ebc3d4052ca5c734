import fs from 'node:fs';
import type { Kafka } from 'kafkajs';
import type { Pool } from 'pg';
import { HEADERS } from '../../../src/kafka/message-format';
import { percentile } from './report';

// Where an event's commit → credited time goes, from timestamps the pipeline already writes or
// logs, all on this one machine's clock: the outbox row's created_at (PostgreSQL), the broker's
// append time (a LogAppendTime topic), the consumer's receipt of the chunk and the start of the
// credit workflow carrying it (its 'batch applied' log line), the inbox row's processed_at
// (PostgreSQL, start of the crediting transaction).

export interface Appended {
  partition: number;
  offset: number;
  appendedAt: number;
}

/** Reads the topic from the start with a group of its own until `expected` distinct event ids are seen. */
export async function readAppendTimes(kafka: Kafka, topic: string, groupId: string, expected: number, timeoutMs = 180_000): Promise<Map<string, Appended>> {
  const seen = new Map<string, Appended>();
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, maxBytesPerPartition: 4 * 1024 * 1024 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    let done: () => void = () => undefined;
    const finished = new Promise<void>((r) => (done = r));
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          const id = m.headers?.[HEADERS.eventId]?.toString();
          // The first append counts (a relay re-send after a crash gap appends again).
          if (id && !seen.has(id)) seen.set(id, { partition: batch.partition, offset: Number(m.offset), appendedAt: Number(m.timestamp) });
        }
        if (seen.size >= expected) done();
      },
    });
    const timer = setTimeout(done, timeoutMs);
    await finished;
    clearTimeout(timer);
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
  return seen;
}

export interface FlightTimes {
  receivedAt: number;
  startedAt: number;
  endedAt: number;
  flightEvents: number;
  workflowMs: number;
}

/** partition:offset → the first flight (consumer log line 'batch applied') that carried it. */
export function readFlights(logFile: string): { byOffset: Map<string, FlightTimes>; flights: FlightTimes[] } {
  const byOffset = new Map<string, FlightTimes>();
  const flights: FlightTimes[] = [];
  if (!fs.existsSync(logFile)) return { byOffset, flights };
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"batch applied"')) continue;
    let entry: { startedAt?: number; workflowMs?: number; events?: number; spans?: { partition: number; firstOffset: string; lastOffset: string; receivedAt?: number }[] };
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (entry.startedAt === undefined || entry.workflowMs === undefined || !entry.spans) continue;
    for (const span of entry.spans) {
      const times: FlightTimes = {
        receivedAt: span.receivedAt ?? entry.startedAt,
        startedAt: entry.startedAt,
        endedAt: entry.startedAt + entry.workflowMs,
        flightEvents: entry.events ?? 0,
        workflowMs: entry.workflowMs,
      };
      for (let o = Number(span.firstOffset); o <= Number(span.lastOffset); o++) {
        const key = `${span.partition}:${o}`;
        if (!byOffset.has(key)) byOffset.set(key, times);
      }
    }
    flights.push({ receivedAt: 0, startedAt: entry.startedAt, endedAt: entry.startedAt + entry.workflowMs, flightEvents: entry.events ?? 0, workflowMs: entry.workflowMs });
  }
  return { byOffset, flights };
}

export interface Percentiles {
  p50Ms: number;
  p99Ms: number;
}

const pcts = (values: number[]): Percentiles => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: Math.round(percentile(sorted, 50)), p99Ms: Math.round(percentile(sorted, 99)) };
};

export interface RunLatency {
  events: number;
  /** commit → credited: inbox processed_at − outbox created_at. */
  credited: Percentiles & { p90Ms: number; maxMs: number };
  /** commit → on Kafka: broker append time − outbox created_at. */
  onKafka: Percentiles;
  /** The stages of commit → credited, each event's own time in each. */
  stages: {
    relay: Percentiles;
    kafkaToConsumer: Percentiles;
    waitForFlight: Percentiles;
    workflowStartToCredit: Percentiles;
  };
  /** After the credit: its commit and the workflow's result reaching the consumer (not part of commit → credited). */
  creditToWorkflowResult: Percentiles;
  /** Events whose every stage was found (the rest lack a log line or an append time). */
  eventsWithStages: number;
  workflows: number;
  eventsPerWorkflow: number;
  workflowRoundTrip: Percentiles;
  /**
   * The three seconds of the run (by commit time, from its start) with the slowest commit → on
   * Kafka: whether a run's tail is spread over it or gathered in one stretch (its first seconds,
   * a pause of one process).
   */
  slowestSeconds: SlowSecond[];
}

export interface SlowSecond {
  second: number;
  events: number;
  onKafkaMaxMs: number;
  creditedMaxMs: number;
}

/** Per second of the run (by commit time), the slowest commit → on Kafka and commit → credited; the `top` slowest seconds. */
export function slowestSeconds(samples: { created: number; onKafka?: number; credited: number }[], runStart: number, top = 3): SlowSecond[] {
  const bySecond = new Map<number, SlowSecond>();
  for (const s of samples) {
    const second = Math.floor((s.created - runStart) / 1000);
    const b = bySecond.get(second) ?? { second, events: 0, onKafkaMaxMs: 0, creditedMaxMs: 0 };
    b.events += 1;
    b.onKafkaMaxMs = Math.max(b.onKafkaMaxMs, Math.round(s.onKafka ?? 0));
    b.creditedMaxMs = Math.max(b.creditedMaxMs, Math.round(s.credited));
    bySecond.set(second, b);
  }
  return [...bySecond.values()].sort((x, y) => y.onKafkaMaxMs - x.onKafkaMaxMs).slice(0, top);
}

/** One run's latencies, for the events whose ids start with `tag-`. */
export async function runLatency(pool: Pool, tag: string, appended: Map<string, Appended>, flights: ReturnType<typeof readFlights>, runStart: number, runEnd: number): Promise<RunLatency> {
  const { rows } = await pool.query<{ id: string; created: number; processed: number }>(
    `SELECT o.payload->>'event_id' AS id,
            extract(epoch FROM o.created_at) * 1000 AS created,
            extract(epoch FROM i.processed_at) * 1000 AS processed
       FROM temporal_outbox.outbox_events o JOIN temporal_outbox.inbox_processed_events i ON i.event_id = o.payload->>'event_id'
      WHERE o.payload->>'event_id' LIKE $1`,
    [`${tag}-%`],
  );
  const credited: number[] = [];
  const onKafka: number[] = [];
  const relay: number[] = [];
  const kafkaToConsumer: number[] = [];
  const waitForFlight: number[] = [];
  const startToCredit: number[] = [];
  const afterCredit: number[] = [];
  const samples: Parameters<typeof slowestSeconds>[0] = [];
  for (const r of rows) {
    const created = Number(r.created);
    const processed = Number(r.processed);
    credited.push(processed - created);
    const a = appended.get(r.id);
    samples.push({ created, credited: processed - created, ...(a ? { onKafka: a.appendedAt - created } : {}) });
    if (!a) continue;
    onKafka.push(a.appendedAt - created);
    const f = flights.byOffset.get(`${a.partition}:${a.offset}`);
    if (!f) continue;
    relay.push(a.appendedAt - created);
    kafkaToConsumer.push(f.receivedAt - a.appendedAt);
    waitForFlight.push(f.startedAt - f.receivedAt);
    startToCredit.push(processed - f.startedAt);
    afterCredit.push(f.endedAt - processed);
  }
  const sorted = [...credited].sort((a, b) => a - b);
  const runFlights = flights.flights.filter((f) => f.startedAt >= runStart && f.startedAt <= runEnd);
  const flightEvents = runFlights.reduce((n, f) => n + f.flightEvents, 0);
  return {
    events: rows.length,
    credited: { ...pcts(credited), p90Ms: Math.round(percentile(sorted, 90)), maxMs: Math.round(sorted.at(-1) ?? NaN) },
    onKafka: pcts(onKafka),
    stages: { relay: pcts(relay), kafkaToConsumer: pcts(kafkaToConsumer), waitForFlight: pcts(waitForFlight), workflowStartToCredit: pcts(startToCredit) },
    creditToWorkflowResult: pcts(afterCredit),
    eventsWithStages: relay.length,
    workflows: runFlights.length,
    eventsPerWorkflow: runFlights.length ? Math.round(flightEvents / runFlights.length) : 0,
    workflowRoundTrip: pcts(runFlights.map((f) => f.workflowMs)),
    slowestSeconds: slowestSeconds(samples, runStart),
  };
}

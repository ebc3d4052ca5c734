import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import { PROJECT_ROOT } from '../../src/config/env';
import { HEADERS } from '../../src/kafka/message-format';
import { withComponentRole } from './database';
import { WORKER_ENV, WORKER_NODE_ARGS } from '../../workers/node-args';
import { trackChild } from './spawned-children';
import { nodeScript } from './compiled-build';
import { keepWorkerLog } from './worker-log-file';

// Helpers for the consumer tests: real consumer worker processes, events in the relay's wire
// format, and waits on outcomes (never on wall-clock speed).

export interface PaymentEvent {
  event_id: string;
  type?: string;
  account_id: number | string;
  amount: number;
}

export interface ConsumerProcess {
  proc: ChildProcess;
  /** Parsed JSON log lines from stdout. */
  logs: Record<string, unknown>[];
  stderr: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  waitForLog(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns the example's consumer worker (or another worker entry) as one process, so SIGKILL kills
 * the worker itself; from the run's compiled build (test/kit/compiled-build.ts).
 */
export function spawnConsumer(env: Record<string, string>, entry = 'examples/payments/consumer-worker.ts', extraNodeArgs: string[] = []): ConsumerProcess {
  // The heap flags are the ones `npm run worker:consumer` uses (workers/node-args.ts); extra
  // flags come after them, so a benchmark can try another setting of the same flag.
  const proc = trackChild(
    spawn(process.execPath, [...WORKER_NODE_ARGS.consumer, ...extraNodeArgs, ...nodeScript(entry)], {
      cwd: PROJECT_ROOT,
      // Under the worker's own role on the local stack, as `npm start` runs it.
      env: { ...process.env, ...WORKER_ENV, LOG_LEVEL: 'info', ...withComponentRole(env, entry.includes('relay') ? 'relay' : entry.includes('retention') ? 'retention' : 'consumer') },
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  // Kept whole under OUTBOX_TEST_WORKER_LOG_DIR, as a relay worker's is: why a consumer held on
  // to its partitions is in lines the tests do not parse.
  keepWorkerLog(proc, entry.includes('retention') ? 'retention' : entry.includes('relay') ? 'relay' : 'consumer');
  const logs: Record<string, unknown>[] = [];
  const stderr: string[] = [];
  let buffered = '';
  proc.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) {
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
    }
  });
  proc.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let done = false;
  void exited.then(() => (done = true));
  return {
    proc,
    logs,
    stderr,
    exited,
    async waitForLog(predicate, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = logs.find(predicate);
        if (hit) return hit;
        if (done) throw new Error(`consumer exited before the expected log line; stderr: ${stderr.join('').slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`no matching log line within ${timeoutMs} ms; stderr: ${stderr.join('').slice(-2000)}`);
        await sleep(100);
      }
    },
    async stop(signal = 'SIGTERM') {
      if (done) return;
      proc.kill(signal);
      const timer = setTimeout(() => proc.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Waits for the worker's "running" line (it bundles workflows first, which takes seconds). */
export async function waitUntilRunning(c: ConsumerProcess): Promise<void> {
  await c.waitForLog((l) => l.msg === 'consumer worker running', 90_000);
}

export function consumerEnv(p: { databaseUrl: string; topic: string; group: string; taskQueue: string; partitions?: number; extra?: Record<string, string> }) {
  return {
    DATABASE_URL: p.databaseUrl,
    KAFKA_TOPIC: p.topic,
    KAFKA_DEAD_LETTER_TOPIC: `${p.topic}.dlq`,
    KAFKA_PARTITIONS: String(p.partitions ?? 3),
    CONSUMER_GROUP: p.group,
    CONSUMER_TASK_QUEUE: p.taskQueue,
    ...p.extra,
  };
}

/** Produces events exactly as the relay does (src/kafka/message-format.ts). */
export async function produceEvents(kafka: Kafka, topic: string, events: PaymentEvent[], chunk = 1000): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  try {
    for (let i = 0; i < events.length; i += chunk) {
      await producer.send({ topic, messages: events.slice(i, i + chunk).map((e, j) => wireMessage(e, i + j)) });
    }
  } finally {
    await producer.disconnect();
  }
}

export function wireMessage(e: PaymentEvent, outboxId: number, createdAt = new Date()) {
  return {
    key: String(e.account_id),
    value: JSON.stringify({ event_id: e.event_id, type: e.type ?? 'payment_confirmed', account_id: e.account_id, amount: e.amount }),
    headers: {
      [HEADERS.eventId]: e.event_id,
      [HEADERS.eventType]: e.type ?? 'payment_confirmed',
      [HEADERS.createdAt]: createdAt.toISOString(),
      [HEADERS.outboxId]: String(outboxId),
    },
  };
}

/** True once the group has committed every partition up to its end. */
export async function groupCaughtUp(kafka: Kafka, group: string, topic: string): Promise<boolean> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    // -1 = nothing committed yet, which is caught up only for a partition that is still empty.
    const byPartition = new Map(committed!.partitions.map((p) => [p.partition, p.offset === '-1' ? 0n : BigInt(p.offset)]));
    return ends.every((e) => (byPartition.get(e.partition) ?? 0n) >= BigInt(e.high));
  } finally {
    await admin.disconnect();
  }
}


/** `unique` events plus `duplicates` redeliveries of earlier ones placed after them; and the balances they must produce. */
export function eventsWithDuplicates(prefix: string, unique: number, duplicates: number, accounts: number): { events: PaymentEvent[]; expected: Map<number, number> } {
  const originals: PaymentEvent[] = [];
  const expected = new Map<number, number>();
  for (let i = 0; i < unique; i++) {
    const account = 1 + (i % accounts);
    const amount = 1 + ((i * 7919) % 10_000);
    originals.push({ event_id: `${prefix}-${i}`, account_id: account, amount });
    expected.set(account, (expected.get(account) ?? 0) + amount);
  }
  const events = [...originals];
  for (let d = 0; d < duplicates; d++) {
    // A redelivery of an earlier event, placed after it (as a relay re-publish would be).
    const source = originals[(d * 3) % unique]!;
    const position = Math.min(events.length, events.indexOf(source) + 1 + ((d * 37) % 500));
    events.splice(position, 0, source);
  }
  return { events, expected };
}

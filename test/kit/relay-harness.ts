import type { Client } from '@temporalio/client';
import { bundleWorkflowCode, NativeConnection, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { IHeaders, Kafka } from 'kafkajs';
import { RELAY_SHARD_WORKFLOW, RELAY_WORKFLOW_TASK_TIMEOUT, type RelayActivityMode, type RelayShardWorkflow } from '../../workflows/relay/contract';
import { PendingListener, PendingScanBounds, type RelayActivities, type RelayActivityDeps } from '../../activities/relay';
import { createRelayWorkerSet } from '../../workers/relay-worker-set';
import { RelayWorkerProcess } from './relay-worker-process';
import { databaseUrl, loadConfig, type Config } from '../../src/config/env';
import { createPool } from '../../src/db/pool';
import { createKafka } from '../../src/kafka/client';
import { createRelayProducer } from '../../src/kafka/relay-producer';
import { FAULT_POINT_MARKER, type FaultPoint } from '../fixtures/relay-worker-fault-point';
import { uniqueName } from './ids';
import { testKafka } from './kafka';
import { temporalConnectionOptions } from '../../src/temporal/connection-options';
import { withComponentRole } from './database';

// Kept importable from here for the tests that already do; the one definition is in wait.ts.

// Relay test plumbing: an in-process relay worker on a task queue of its own, relay worker
// processes (for kill -9), and an exact read of everything a topic holds.

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;
/** Bundled once per test process, so each test's worker starts in milliseconds. */
function relayBundle() {
  bundle ??= bundleWorkflowCode({ workflowsPath: require.resolve('../../workflows/relay'), logger: quietBundlerLogger });
  return bundle;
}
const quietBundlerLogger = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

export function relayTestConfig(dbUrl: string, topic: string, extra: Record<string, string> = {}): Config {
  return loadConfig({ ...process.env, DATABASE_URL: dbUrl, KAFKA_TOPIC: topic, RELAY_TASK_QUEUE: uniqueName('relay-tq'), ...extra });
}

export interface InProcessRelay {
  taskQueue: string;
  config: Config;
  /** The very activities the worker runs, e.g. for a benchmark timing the relay's own poll. */
  activities: RelayActivities;
  /** The bounds those activities poll from, per shard. */
  bounds: PendingScanBounds;
  close(): Promise<void>;
}

/** A relay worker inside this process, on config.relay.taskQueue, with the production activities. */
export async function startInProcessRelay(config: Config, extra: Pick<RelayActivityDeps, 'events'> = {}): Promise<InProcessRelay> {
  const pool = createPool(databaseUrl(config), { schema: config.database.schema, max: 10, application_name: 'testkit-relay-worker' });
  const listener = new PendingListener(databaseUrl(config));
  const producer = createRelayProducer(createKafka(config, uniqueName('relay-test')));
  await producer.connect();
  const bounds = new PendingScanBounds(config.relay.fullScanIntervalMs);
  const connection = await NativeConnection.connect(temporalConnectionOptions(config));
  const workers = await createRelayWorkerSet({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.relay.taskQueue!,
    workflowBundle: await relayBundle(),
    deps: { pool, producer, config, listener, ...extra },
    sessionDatabase: databaseUrl(config),
    bounds,
    shutdownGraceTime: '2 seconds',
  });
  const running = workers.run();
  return {
    taskQueue: config.relay.taskQueue!,
    config,
    activities: workers.activities,
    bounds,
    async close() {
      await workers.shutdown();
      await running.catch(() => undefined);
      await connection.close().catch(() => undefined);
      await producer.disconnect().catch(() => undefined);
      await listener.close();
      await pool.end().catch(() => undefined);
    },
  };
}

export interface ShardOptions {
  shardIndex?: number;
  shardCount?: number;
  batchSize?: number;
  maxBatchesPerRun?: number;
  idleWaitMs?: number;
  drainGraceMs?: number;
  /** A relay session's length (the workflow's default, 30 s, when unset). */
  sessionMs?: number;
  /** Default (unset) is the workflow's own default, relay sessions. */
  activityMode?: RelayActivityMode;
}

const started: { client: Client; workflowId: string }[] = [];

/** Terminates every relay workflow this test process started and left running (an `afterEach`). */
export async function terminateStartedShards(): Promise<void> {
  for (const { client, workflowId } of started.splice(0)) {
    await client.workflow.getHandle(workflowId).terminate('test finished').catch(() => undefined);
  }
}

/** Starts one relay shard workflow under a unique id (tests never share a workflow id). */
export async function startShard(client: Client, taskQueue: string, opts: ShardOptions = {}, workflowId = uniqueName(`relay-shard-${opts.shardIndex ?? 0}`)) {
  started.push({ client, workflowId });
  return client.workflow.start<RelayShardWorkflow>(RELAY_SHARD_WORKFLOW, {
    taskQueue,
    workflowId,
    workflowTaskTimeout: RELAY_WORKFLOW_TASK_TIMEOUT,
    args: [{ shardIndex: opts.shardIndex ?? 0, shardCount: opts.shardCount ?? 1, batchSize: opts.batchSize ?? 100, maxBatchesPerRun: opts.maxBatchesPerRun, idleWaitMs: opts.idleWaitMs, drainGraceMs: opts.drainGraceMs, sessionMs: opts.sessionMs, activityMode: opts.activityMode }],
  });
}

/** A relay worker process (workers/relay.worker.ts, compiled once per run), for tests that kill -9 it at a fault point. */
export class RelayProcess extends RelayWorkerProcess {
  /** Under the relay's own role on the local stack, as `npm start` runs it. */
  constructor(env: Record<string, string>, extraNodeArgs: string[] = [], entry?: string[]) {
    super(withComponentRole(env, 'relay'), extraNodeArgs, entry);
  }

  /** The production worker with its activities wrapped to stop dead at `point` (test/fixtures/relay-worker-fault-point.ts). */
  static pausingAt(point: FaultPoint, env: Record<string, string>): RelayProcess {
    return new RelayProcess(env, [], [require.resolve('../fixtures/relay-worker-fault-point'), point]);
  }

  /** Resolves with the fault point's JSON detail once the worker reports reaching it. */
  async waitForFaultPoint(timeoutMs = 60_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const match = new RegExp(`${FAULT_POINT_MARKER} (\\{.*\\})`).exec(this.stderr);
      if (match) return JSON.parse(match[1]!);
      if (this.child.exitCode !== null) throw new Error(`relay worker exited (${this.child.exitCode}) before the fault point:\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`relay worker did not reach its fault point in ${timeoutMs} ms:\n${this.stderr}`);
  }
}

export interface TopicMessage {
  key: string;
  value: string;
  /** The value's bytes as sent (a Schema Registry framed value is no text). */
  valueBytes: Buffer | null;
  headers: Record<string, string>;
  partition: number;
  offset: number;
}

/** Every message the topic holds right now (up to each partition's high watermark), in partition order. */
export async function readWholeTopic(topic: string, timeoutMs = 60_000, kafka: Kafka = testKafka()): Promise<TopicMessage[]> {
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const highWater = new Map(offsets.map((o) => [o.partition, Number(o.high)]));
  const total = [...highWater.values()].reduce((a, b) => a + b, 0);
  const messages: TopicMessage[] = [];
  if (total === 0) return messages;
  const consumer = kafka.consumer({ groupId: uniqueName('relay-test-reader'), sessionTimeout: 10_000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${messages.length} of ${total} messages of ${topic} in ${timeoutMs} ms`)), timeoutMs);
      void consumer.run({
        eachMessage: async ({ partition, message }) => {
          if (Number(message.offset) >= (highWater.get(partition) ?? 0)) return;
          messages.push({ key: message.key?.toString() ?? '', value: message.value?.toString() ?? '', valueBytes: message.value, headers: headersToStrings(message.headers), partition, offset: Number(message.offset) });
          if (messages.length === total) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return messages.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k, String(v)]));
}

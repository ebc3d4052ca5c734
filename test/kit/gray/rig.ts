import { setTimeout as sleep } from 'node:timers/promises';
import type { Client, Connection, WorkflowHandle } from '@temporalio/client';
import { loadConfig } from '../../../src/config/env';
import { loadStackConfig } from '../../../tools/local-stack/stack-config';
import type { RelayStatus } from '../../../workflows/relay/status';
import { consumerEnv, spawnConsumer, type ConsumerProcess } from '../consumer-harness';
import { componentDatabaseUrl, createTestDatabase, type TestDatabase } from '../database';
import { startFaultProxy, type FaultLink, type FaultProxy } from '../fault-proxy';
import { uniqueName } from '../ids';
import { createTestTopic } from '../kafka';
import { RelayProcess, startShard, terminateStartedShards } from '../relay-harness';
import { testTemporalClient } from '../temporal';
import type { Service, WorkerKind } from './cells';
import { GrayTraffic } from './traffic';

const STARTUP_MS = 240_000;
// How long the rig waits for one shard's status query.
const QUERY_BOUND_MS = 2_000;
const SHARDS = 8;
const PARTITIONS = 6;
export const ACCOUNTS = 64;

/** One worker process of the rig, whatever its kind. */
export interface RigWorker {
  pid: number;
  /** Log lines (JSON where the worker logs JSON), newest last. */
  lines(): string[];
  kill9(): Promise<void>;
}

/**
 * The whole pipeline with real worker processes, for the gray-failure matrix: two relay workers,
 * two consumers and a retention worker on a database, topic and task queues of their own. The
 * "A" worker of each kind reaches PostgreSQL, Kafka and Temporal through a fault link each (so any
 * of its links can break); the others reach everything directly. Traffic is inserted into the
 * outbox at a steady pace and credited to accounts by the consumers.
 */
export class GrayRig {
  readonly links = new Map<WorkerKind, Record<Service, FaultLink>>();
  readonly relays: { a: RelayProcess; b: RelayProcess };
  readonly consumers: { a: ConsumerProcess; b: ConsumerProcess };
  readonly retention?: ConsumerProcess;
  readonly shards: WorkflowHandle[] = [];
  traffic!: GrayTraffic;

  private constructor(
    readonly db: TestDatabase,
    readonly temporal: { client: Client; connection: Connection },
    readonly proxy: FaultProxy,
    readonly topic: { topic: string; remove(): Promise<void> },
    readonly names: { relayQueue: string; consumerQueue: string; group: string; retentionQueue: string },
    workers: { relays: GrayRig['relays']; consumers: GrayRig['consumers']; retention?: ConsumerProcess },
    links: Map<WorkerKind, Record<Service, FaultLink>>,
  ) {
    this.relays = workers.relays;
    this.consumers = workers.consumers;
    this.retention = workers.retention;
    this.links = links;
  }

  /** Starts everything and waits until every worker runs, both relays hold shards and both consumers credit. */
  static async start(opts: { retention?: boolean; log?: (m: string) => void } = {}): Promise<GrayRig> {
    const log = opts.log ?? (() => undefined);
    const db = await createTestDatabase({ prefix: 'gray' });
    await db.pool.query('INSERT INTO accounts (account_id) SELECT generate_series(1, $1::int)', [ACCOUNTS]);
    const temporal = await testTemporalClient();
    const proxy = await startFaultProxy();
    const topic = await createTestTopic(PARTITIONS);
    const names = { relayQueue: uniqueName('gray-relay-tq'), consumerQueue: uniqueName('gray-consumer-tq'), group: uniqueName('gray-group'), retentionQueue: uniqueName('gray-retention-tq') };
    const stack = loadStackConfig();
    const broker = loadConfig().kafka.brokers[0]!;
    const [kafkaHost, kafkaPort] = [broker.slice(0, broker.lastIndexOf(':')), Number(broker.slice(broker.lastIndexOf(':') + 1))];
    const temporalAddress = loadConfig().temporal.address;
    const [temporalHost, temporalPort] = [temporalAddress.slice(0, temporalAddress.lastIndexOf(':')), Number(temporalAddress.slice(temporalAddress.lastIndexOf(':') + 1))];
    const links = new Map<WorkerKind, Record<Service, FaultLink>>();
    /** A's environment: its own database login, the broker and Temporal, each through a link of its own. */
    const throughLinks = async (kind: WorkerKind): Promise<Record<string, string>> => {
      const l = {
        postgres: await proxy.link(uniqueName(`${kind}-a-pg`), { host: '127.0.0.1', port: stack.local.pgPort }),
        kafka: await proxy.link(uniqueName(`${kind}-a-kafka`), { host: kafkaHost, port: kafkaPort }),
        temporal: await proxy.link(uniqueName(`${kind}-a-temporal`), { host: temporalHost, port: temporalPort }),
      };
      links.set(kind, l);
      const url = new URL(componentDatabaseUrl({ DATABASE_URL: db.url }, kind)!);
      url.host = l.postgres.address;
      // The broker advertises its own address; the route sends A's connections to it through the link.
      return { [`${kind.toUpperCase()}_DATABASE_URL`]: url.toString(), KAFKA_BROKER_ROUTES: `${broker}=${l.kafka.address}`, TEMPORAL_ADDRESS: l.temporal.address };
    };
    const relayEnv = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RELAY_TASK_QUEUE: names.relayQueue };
    const consumerBase = consumerEnv({ databaseUrl: db.url, topic: topic.topic, group: names.group, taskQueue: names.consumerQueue, partitions: PARTITIONS, extra: { CONSUMER_BATCH_SIZE: '200' } });
    const retentionEnv = { DATABASE_URL: db.url, KAFKA_TOPIC: topic.topic, RETENTION_TASK_QUEUE: names.retentionQueue };
    const relays = { a: new RelayProcess({ ...relayEnv, ...(await throughLinks('relay')) }), b: new RelayProcess(relayEnv) };
    const consumers = { a: spawnConsumer({ ...consumerBase, ...(await throughLinks('consumer')) }), b: spawnConsumer(consumerBase) };
    const retention = opts.retention ? spawnConsumer({ ...retentionEnv, ...(await throughLinks('retention')) }, 'examples/payments/retention-worker.ts') : undefined;
    const rig = new GrayRig(db, temporal, proxy, topic, names, { relays, consumers, retention }, links);
    try {
      await Promise.all([
        relays.a.waitUntilRunning(STARTUP_MS),
        relays.b.waitUntilRunning(STARTUP_MS),
        consumers.a.waitForLog((l) => l.msg === 'consumer worker running', STARTUP_MS),
        consumers.b.waitForLog((l) => l.msg === 'consumer worker running', STARTUP_MS),
        retention?.waitForLog((l) => l.msg === 'retention worker running', STARTUP_MS),
      ]);
      log('workers running');
      for (let i = 0; i < SHARDS; i++) rig.shards.push(await startShard(temporal.client, names.relayQueue, { shardIndex: i, shardCount: SHARDS, batchSize: 100 }));
      rig.traffic = new GrayTraffic(db.pool, ACCOUNTS);
      return rig;
    } catch (err) {
      await rig.stop();
      throw err;
    }
  }

  /**
   * The pid of the relay worker running each shard's session now (NaN where unknown). Each query
   * is bounded: one whose workflow task waits for a worker cut off from Temporal answers only
   * once the task moves, and a cell measuring a takeover must not wait for it.
   */
  async shardHolders(): Promise<number[]> {
    const bounded = (h: WorkflowHandle) => Promise.race([h.query<RelayStatus>('status').catch(() => undefined), sleep(QUERY_BOUND_MS).then(() => undefined)]);
    const statuses = await Promise.all(this.shards.map(bounded));
    return statuses.map((s) => Number(/-(\d+)-[0-9a-f]+$/.exec(s?.worker ?? '')?.[1]));
  }

  /** The worker of `kind` whose links can break. */
  faulty(kind: WorkerKind): RigWorker {
    if (kind === 'relay') return relayWorker(this.relays.a);
    if (kind === 'consumer') return consumerWorker(this.consumers.a);
    if (!this.retention) throw new Error('this rig runs no retention worker');
    return consumerWorker(this.retention);
  }

  /**
   * Stops everything: the worker processes first (kill -9) and the fault proxy, then what they
   * used. Each step runs whatever an earlier one did, so a failed step (a service that no longer
   * answers) never leaves a worker process running; the first error is thrown at the end.
   */
  async stop(): Promise<void> {
    const errors: unknown[] = [];
    const step = (work: () => Promise<unknown>) => work().catch((err: unknown) => void errors.push(err));
    await step(async () => this.traffic?.stop());
    const all = [relayWorker(this.relays.a), relayWorker(this.relays.b), consumerWorker(this.consumers.a), consumerWorker(this.consumers.b), ...(this.retention ? [consumerWorker(this.retention)] : [])];
    await Promise.all(all.map((w) => step(() => w.kill9())));
    await step(() => this.proxy.close());
    await step(() => terminateStartedShards());
    await step(() => this.topic.remove());
    await step(() => this.temporal.connection.close());
    await step(() => this.db.drop());
    if (errors.length > 0) throw errors[0];
  }
}

function relayWorker(p: RelayProcess): RigWorker {
  return { pid: p.child.pid!, lines: () => p.logLines, kill9: () => p.kill9() };
}

function consumerWorker(p: ConsumerProcess): RigWorker {
  return { pid: p.proc.pid!, lines: () => p.logs.map((l) => JSON.stringify(l)), kill9: () => p.stop('SIGKILL') };
}

import type { Producer } from 'kafkajs';
import { PendingListener, type RelayActivities } from '../activities/relay';
import { TASK_QUEUES } from '../src/config/constants';
import { workerDatabaseUrl, type Config } from '../src/config/env';
import { createLogger } from '../src/config/logger';
import { createPool, databaseTimeouts, endPool } from '../src/db/pool';
import { createKafka } from '../src/kafka/client';
import { createRelayProducer } from '../src/kafka/relay-producer';
import { boundedCall, sendBoundMs } from '../src/kafka/bounded-send';
import { abandonableProducer } from '../src/kafka/abandonable-producer';
import { ensureTopics, eventTopics } from '../src/kafka/topics';
import { startRelaySamplers } from '../src/observability/relay-samplers';
import { startWorkerObservability } from '../src/observability/worker-observability';
import { startMemoryLog } from './memory-log';
import { connectionInUseProbe, kafkaProbe, postgresProbe, temporalProbe } from './link-health';
import { LinkStreak } from './link-streak';
import { runWorkerMain } from './run-main';
import { runSteppingAside } from './step-aside';
import { createRelayWorkerSet } from './relay-worker-set';
import { startRelayMembership, type MembershipLinks } from './relay-membership';
import { temporalConnectionOptions } from '../src/temporal/connection-options';
import { NativeConnection } from '@temporalio/worker';
import { workflowCode } from './temporal-worker';
import { onAbort, poolConnectionSettings, type WorkerOptions } from './worker-options';
import type { EventCatalog } from '../src/events/catalog';
import { loadEventCatalogModule } from '../src/asyncapi/load-source';
import { registryEncoderFromConfig, schemaCatalogFromEvents } from '../src/formats/registry';

// One relay worker: runs relay shard workflows, and the relay sessions of the shards placed on
// it. Any number of these may run: each registers in outbox_relay_workers, the shards spread over
// the live ones (docs/relay.md, "Where shards run"), so adding a process adds capacity, and a
// shard's advisory lock keeps two sessions of one shard from relaying at once.

export interface RelayWorkerOptions extends WorkerOptions {
  /**
   * issue 34 (events): the service's event types (defineEventCatalog). Given, the relay parks a
   * row of a known type whose payload its schema refuses, with the schema's message, instead of
   * publishing it; other rows are untouched; and with a Schema Registry, a `json-schema` topic
   * carries the JSON Schema of each row's version, registered under its subject
   * (schemaCatalogFromEvents). Unset: payloads are checked only for what every event needs
   * (docs/events.md), and registry topics use each subject's latest schema.
   */
  events?: EventCatalog;
}

/** Test hooks, reachable from this module only (the package exports runRelayWorker). */
export interface RelayWorkerHooks {
  /** Wraps the activities before the worker registers them: how a test fixture injects faults. */
  wrapActivities?: (activities: RelayActivities) => RelayActivities;
}

/** Runs one relay worker until `signal` aborts (it finishes in-flight batches first). */
export function runRelayWorker(config: Config, options: RelayWorkerOptions = {}): Promise<void> {
  return runRelayWorkerWithHooks(config, options, {});
}

export async function runRelayWorkerWithHooks(config: Config, options: RelayWorkerOptions, hooks: RelayWorkerHooks): Promise<void> {
  const logger = options.logger ?? createLogger('relay-worker', config.logLevel);
  const taskQueue = config.relay.taskQueue ?? TASK_QUEUES.relay;
  const observability = await startWorkerObservability(config, 'relay', logger, options);
  const newPool = () => createPool(workerDatabaseUrl(config, 'relay'), { schema: config.database.schema, max: 10, ...databaseTimeouts(config) });
  const pool = options.pool ?? newPool();
  // Sessions and the LISTEN need connections of their own, to the database the pool uses.
  const dedicated = options.pool ? poolConnectionSettings(options.pool) : workerDatabaseUrl(config, 'relay');
  const listener = new PendingListener(dedicated, config.links.database);
  // How long every link has answered, written with each lease renewal (src/outbox/relay-avoidance.ts).
  const streak = new LinkStreak();
  // Its clients (the producers, the topic check, the Kafka probe) join no group: a connection is
  // presumed dead 1 s past the request timeout (16 s), not 25 s. One presumed dead restarts the
  // streak: a session that failed on it made its shard avoid this worker, and the shard comes back
  // once every link answers again, not only when the avoidance (60 s) ends.
  const kafka = createKafka(config, `outbox-relay-${process.pid}`, logger, {
    groupMember: false,
    onPresumedDead: (err) => {
      streak.broke();
      logger.warn({ err: err.message }, 'a Kafka connection was presumed dead: the links count as healthy again from the next full health round');
    },
  });
  // Not idempotent, and no retries inside kafkajs: src/kafka/relay-producer.ts says why.
  const producer: Producer = createRelayProducer(kafka);
  // Connected before anything starts, so a Temporal that cannot be reached stops the worker at
  // once; each later membership (after a step-aside) opens a new one (workers/relay-membership.ts).
  let firstConnection: NativeConnection | undefined;
  const samplers = observability.sampling ? startRelaySamplers(pool, config, logger) : undefined;
  // With the service's types, registry topics carry the schemas they declare (registered, or found
  // registered): one encoder for the process, so each schema is looked up once.
  const schemaRegistry = options.events ? registryEncoderFromConfig(config, schemaCatalogFromEvents(options.events)) : undefined;
  try {
    await ensureTopics(kafka, config, eventTopics(config.kafka));
    await producer.connect();
    const code = await workflowCode(config, require.resolve('../workflows/relay'), observability.tracing.exporting);
    if (!options.connection) firstConnection = await NativeConnection.connect(temporalConnectionOptions(config));
    // The first membership uses the worker's pool and producer; each later one a new pool (unless
    // the service gave its pool) and a new producer of its own, let go once that membership has
    // drained: a producer whose broker connections a one-way link froze would keep sending into them.
    // When the current membership began to start, and when its links were ready: logged at its
    // start (what a rejoin costs, and where).
    let startingAt = Date.now();
    let linksReadyAt = startingAt;
    let firstPool: typeof pool | undefined = pool;
    // The running membership's Temporal connection (none while stepped aside), probed as a link of
    // its own: a heal that leaves it dead (its HTTP/2 connection frozen, found by the SDK's
    // keepalive only after up to 45 s) while a new connection works makes the worker step aside
    // and rejoin on a new one, instead of keeping shards it cannot be given work for.
    let membershipConnection: NativeConnection | undefined;
    let firstProducer: Producer | undefined = producer;
    const newProducer = async () => {
      const fresh = createRelayProducer(kafka);
      await boundedCall(fresh.connect(), sendBoundMs(config), 'Kafka producer connect').catch(async (err: unknown) => {
        await boundedCall(fresh.disconnect(), sendBoundMs(config), 'Kafka producer disconnect').catch(() => undefined);
        throw err;
      });
      return fresh;
    };
    const membershipLinks = async (): Promise<MembershipLinks> => {
      const given = options.connection;
      const keptProducer = firstProducer;
      const keptConnection = given ?? firstConnection;
      firstProducer = undefined;
      firstConnection = undefined;
      // The producer and the Temporal connection are opened side by side (a rejoin waits for both).
      const [producerOpened, connectionOpened] = await Promise.allSettled([
        keptProducer ? Promise.resolve(keptProducer) : newProducer(),
        keptConnection ? Promise.resolve(keptConnection) : NativeConnection.connect(temporalConnectionOptions(config)),
      ]);
      if (producerOpened.status === 'rejected' || connectionOpened.status === 'rejected') {
        if (producerOpened.status === 'fulfilled') await boundedCall(producerOpened.value.disconnect(), sendBoundMs(config), 'Kafka producer disconnect').catch(() => undefined);
        if (connectionOpened.status === 'fulfilled' && !given) await connectionOpened.value.close().catch(() => undefined);
        throw producerOpened.status === 'rejected' ? producerOpened.reason : (connectionOpened as PromiseRejectedResult).reason;
      }
      const membershipProducer = producerOpened.value;
      const connection = connectionOpened.value;
      const own = options.pool || firstPool ? undefined : newPool();
      const membershipPool = own ?? firstPool ?? pool;
      firstPool = undefined;
      const ownProducer = membershipProducer;
      const sends = abandonableProducer(ownProducer);
      linksReadyAt = Date.now();
      membershipConnection = connection;
      return {
        connection,
        pool: membershipPool,
        producer: sends.producer,
        abandon: sends.abandon,
        release: async () => {
          if (!given) await connection.close().catch(() => undefined);
          if (own) await endPool(own);
          await boundedCall(ownProducer.disconnect(), sendBoundMs(config), 'Kafka producer disconnect').catch(() => undefined);
        },
      };
    };
    const stopped = new AbortController();
    onAbort(options.signal, () => {
      logger.info('stopping: leaving the relay workers, finishing in-flight batches');
      stopped.abort();
    });
    let memoryLog: ReturnType<typeof startMemoryLog> | undefined;
    try {
      // A worker that cannot reach PostgreSQL, Kafka or Temporal leaves the relay workers and stops taking
      // Temporal tasks until all answer again (workers/step-aside.ts); its shards move meanwhile.
      await runSteppingAside({
        start: async () => {
          startingAt = Date.now();
          // A start that fails has released its links: none is in use (else its probe would fail on
          // a closed connection and the worker would never count as healed).
          const membership = await startRelayMembership(membershipLinks, ({ connection, pool: membershipPool, producer: membershipProducer }) =>
            createRelayWorkerSet({
              connection,
              namespace: config.temporal.namespace,
              taskQueue,
              workflowBundle: { code },
              deps: { pool: membershipPool, producer: membershipProducer, config, listener, events: options.events, ...(schemaRegistry ? { schemaRegistry } : {}) },
              sessionDatabase: dedicated,
              wrapActivities: hooks.wrapActivities,
              // Let an in-flight batch finish on SIGTERM (its send and mark take well under this).
              shutdownGraceTime: '10 seconds',
              workerOptions: observability.tracing.workerOptions,
              linksOkForMs: () => streak.okForMs(),
            }),
          ).catch((err: unknown) => {
            membershipConnection = undefined;
            throw err;
          });
          return {
            ...membership,
            shutdown: (stepAside?: boolean) => {
              membershipConnection = undefined;
              return membership.shutdown(stepAside);
            },
          };
        },
        onStarted: (workers, first) => {
          logger.info(
            { pid: process.pid, taskQueue, workerId: workers.registry.workerId, ownTaskQueue: workers.registry.taskQueue, topic: config.kafka.topic, eventTypes: options.events?.definitions().map((d) => d.type), startedInMs: Date.now() - startingAt, linksInMs: linksReadyAt - startingAt },
            first ? 'relay worker running' : 'relay worker rejoined',
          );
          if (first) memoryLog = startMemoryLog(logger, config.relay.memoryLogMs);
        },
        probes: {
          postgres: postgresProbe(dedicated, config.links.health.timeoutMs),
          kafka: kafkaProbe(kafka, config.kafka.topic),
          temporal: temporalProbe(config, config.links.health.timeoutMs),
          'temporal (the worker connection)': connectionInUseProbe(() => membershipConnection, config.links.health.timeoutMs),
        },
        onRound: (failing) => streak.round(failing),
        health: config.links.health,
        logger,
        stopped: stopped.signal,
      });
    } finally {
      memoryLog?.stop();
    }
  } finally {
    await samplers?.stop();
    await observability.close();
    await firstConnection?.close().catch(() => undefined);
    await boundedCall(producer.disconnect(), sendBoundMs(config), 'Kafka producer disconnect').catch(() => undefined);
    await Promise.race([listener.close(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    if (!options.pool) await endPool(pool);
  }
}

/**
 * The bundled relay worker process (`temporal-outbox relay worker`, `node dist/workers/relay.worker.js`):
 * given an events module (`--events`, OUTBOX_EVENTS_MODULE), it checks rows against that module's
 * event definitions. A module that cannot be loaded or has none stops it before it connects.
 */
export function runRelayWorkerMain(eventsModule: string | undefined): void {
  if (!eventsModule) return runWorkerMain('relay worker', (config, process) => runRelayWorker(config, process));
  loadEventCatalogModule(eventsModule).then(
    (events) => runWorkerMain('relay worker', (config, process) => runRelayWorker(config, { ...process, events })),
    (err: unknown) => {
      process.stderr.write(`relay worker refused to start: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}

if (require.main === module) runRelayWorkerMain(process.env.OUTBOX_EVENTS_MODULE || undefined);

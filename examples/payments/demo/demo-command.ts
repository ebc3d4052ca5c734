import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { Kafka } from 'kafkajs';
import type { Command } from 'commander';
import { countAccountsWithPayments, mismatchedAccounts } from './account-balance-check';
import { startWorkerEntry, stopChildWorkers, type ChildWorker } from '../../../tools/local-stack/child-processes';
import { confirmOneDemoPayment, ensureDemoAccounts, runAtRate } from './demo-traffic';
import { readPipelineStats, type PipelineStats } from './pipeline-stats';
import { EXAMPLE_KEY_FIELD, migrateExample } from '../../migrate';
import { waitForPollers } from '../../../tools/local-stack/wait-for-workers';
// The demo is a user of the package: it imports its public API only (what `temporal-outbox`
// and `temporal-outbox/local-stack` export), never the modules behind it.
import {
  configuredRelayControl,
  createPool,
  ensureAuditSchedule,
  ensureRetentionSchedule,
  relayShardCount,
  restartShards,
  setUp,
  startRelays,
  stuckShards,
  TASK_QUEUES,
  temporalConnectionOptions,
  workerEntry,
  type RelayControlOptions,
  type WorkerEntry,
} from 'temporal-outbox';
import { cachePaths, loadStackConfig, localStackEnv, stackDown, stackUp, workerTargets, type ServiceName } from '../../../tools/local-stack';
import { exampleConsumerEntry, exampleRetentionEntry } from '../worker-entries';
import { ensureSchemaRegistry, localSchemaRegistryUrl, stopSchemaRegistry } from '../../../tools/local-stack';
import { countRecorded, countShipments, describeOneShipment, registerShipmentSchema, registryDemoEnv, shipmentsToRecord, shipmentsTopicOf, shipOneDemoOrder, SHIPMENTS_TOPIC } from './registry-shipments';

/** Shipments a second with --with-registry: enough to see them flow beside the payments. */
const SHIPMENT_RATE = 2;

// The same processes and flags as the npm scripts `worker:relay`, `worker:consumer`, `worker:retention`.
const WORKERS: { name: string; entry: () => WorkerEntry }[] = [
  { name: 'relay-worker', entry: () => workerEntry('relay') },
  { name: 'consumer-worker', entry: exampleConsumerEntry },
  { name: 'retention-worker', entry: exampleRetentionEntry },
];

export function registerDemoCommand(program: Command) {
  program
    .command('demo')
    .description('the whole pipeline live: stack, workers, relay shards, retention schedule and demo payments')
    .option('--rate <n>', 'demo payments confirmed per second', (v) => Number(v), 50)
    .option('--duration <seconds>', 'stop by itself after this many seconds (default: run until Ctrl-C)', (v) => Number(v))
    .option('--keep-stack', 'leave the services this started running when the demo ends')
    .option('--with-registry', `also ship orders (${SHIPMENT_RATE}/s) on ${SHIPMENTS_TOPIC} in Avro through a local Schema Registry, decoded by the consumer through it (the first run builds the registry: minutes; docs/demo.md)`)
    .action(async (opts: DemoOptions) => {
      process.exitCode = await runDemo(opts);
    });
}

interface DemoOptions {
  rate: number;
  duration?: number;
  keepStack?: boolean;
  withRegistry?: boolean;
}

async function runDemo(opts: DemoOptions): Promise<number> {
  const config = loadStackConfig();
  const say = (m: string) => console.log(`[demo] ${m}`);
  let started: ServiceName[] = [];
  let workers: ChildWorker[] = [];
  let registryStarted = false;
  if (config.database.url === undefined) throw new Error('DATABASE_URL is not set');
  const pool = createPool(config.database.url, { schema: config.database.schema });
  const shipmentsTopic = shipmentsTopicOf(config.kafka.routes);
  // The first Ctrl-C (or SIGTERM, or the terminal closing) stops the traffic and waits for the
  // pipeline to drain; a second one stops waiting. Either way the workers and the services this
  // demo started are stopped before it exits (its workers do not hear Ctrl-C themselves). One
  // Ctrl-C under `npm start` arrives more than once within milliseconds (from the terminal to the
  // whole process group, and relayed again by npm), so repeats within a second count as one.
  const stop = new AbortController();
  const giveUpDraining = new AbortController();
  let firstStopAt = 0;
  const onStopSignal = () => {
    if (!stop.signal.aborted) {
      firstStopAt = Date.now();
      return stop.abort();
    }
    if (Date.now() - firstStopAt < 1000 || giveUpDraining.signal.aborted) return;
    say('not waiting for the pipeline to drain: stopping the workers and services');
    giveUpDraining.abort();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onStopSignal);
  try {
    started = await stackUp(config, (m) => say(m));
    let registryEnv: Record<string, string> = {};
    if (opts.withRegistry) {
      const registryStart = Date.now();
      registryStarted = await ensureSchemaRegistry(config, cachePaths(config.local.cacheDir), say);
      const registryUrl = localSchemaRegistryUrl(config.local.schemaRegistryPort);
      const schemaId = await registerShipmentSchema(registryUrl, shipmentsTopic);
      registryEnv = registryDemoEnv(registryUrl, shipmentsTopic, { routes: config.kafka.routes, registryTopics: config.kafka.schemaRegistry?.topics ?? {} });
      say(`Schema Registry ready in ${((Date.now() - registryStart) / 1000).toFixed(1)} s: order_shipped goes to ${shipmentsTopic} in Avro (subject ${shipmentsTopic}-value, schema id ${schemaId})`);
    }
    const setup = await setUp(config, { keyField: EXAMPLE_KEY_FIELD });
    const exampleMigrations = await migrateExample(config.database.url);
    say(`schema, topics and search attributes ready (${setup.migrations.length} library and ${exampleMigrations.length} example migrations applied now)`);

    const logDir = path.join(cachePaths(config.local.cacheDir).logs, 'workers');
    // Each worker logs in as its own component's user on the local stack.
    const workerEnv = { ...localStackEnv(process.env, { workerLogins: true }), ...registryEnv };
    workers = WORKERS.map((w) => startWorkerEntry(w.name, w.entry(), logDir, workerEnv, [], { ownProcessGroup: true }));
    for (const w of workers) say(`${w.name} started (pid ${w.process.pid}, log ${w.logFile})`);

    const connection = await Connection.connect(temporalConnectionOptions(config, { connectTimeout: config.temporal.connectTimeoutMs }));
    const client = new Client({ connection, namespace: config.temporal.namespace });
    await waitForPollers(client, [config.relay.taskQueue ?? TASK_QUEUES.relay, config.consumer.taskQueue ?? TASK_QUEUES.consumer, config.retention.taskQueue]);
    say('all three workers are polling Temporal');
    const control = configuredRelayControl(config, client, pool);
    // The recorded layout, else RELAY_SHARDS: an outbox laid out earlier keeps its shard count.
    const shardCount = await relayShardCount(pool, config);
    const relays = await startRelays(control, shardCount);
    say(`relay shards: started [${relays.started.join(', ')}], already running [${relays.alreadyRunning.join(', ')}]`);
    if (relays.alreadyRunning.length > 0) await restartStuckShards(control, shardCount, say);
    say(`retention schedule ${config.retention.scheduleId}: ${await ensureRetentionSchedule(client, config)} (every ${config.retention.interval})`);
    say(`audit schedule ${config.audit.scheduleId}: ${await ensureAuditSchedule(client, config)} (every ${config.audit.interval})`);
    await connection.close();

    await ensureDemoAccounts(pool);
    console.log(`\n  Temporal UI: ${config.temporal.uiUrl}/namespaces/${config.temporal.namespace}/workflows`);
    // The workers serve Prometheus metrics (docs/observability.md) unless METRICS_PORT_BASE=0.
    const metricsUrls = workerTargets(config).filter((t) => !t.job.endsWith('-sdk')).map((t) => `http://${t.address}/metrics`);
    console.log(metricsUrls.length ? `  metrics: ${metricsUrls.join(' ')}\n` : '');
    say(`confirming ${opts.rate} payments/s${opts.duration ? ` for ${opts.duration} s` : ' until Ctrl-C'}`);

    if (opts.duration) setTimeout(() => stop.abort(), opts.duration * 1000).unref();
    if (opts.withRegistry) say(`and shipping ${SHIPMENT_RATE} orders/s (order_shipped, Avro through the registry on ${shipmentsTopic})`);
    const shipmentsLine = async () => (opts.withRegistry ? ` | shipments recorded ${await countShipments(pool)} (decoded from Avro through the registry)` : '');
    const ticker = setInterval(() => void Promise.all([readPipelineStats(pool), shipmentsLine()]).then(([s, shipped]) => say(line(s) + shipped)).catch(() => undefined), 5000);
    const [sent, shipped] = await Promise.all([
      runAtRate(opts.rate, stop.signal, () => confirmOneDemoPayment(pool)),
      opts.withRegistry ? runAtRate(SHIPMENT_RATE, stop.signal, () => shipOneDemoOrder(pool)) : Promise.resolve(0),
    ]);
    clearInterval(ticker);
    say(`traffic stopped after ${sent} payments${opts.withRegistry ? ` and ${shipped} shipments` : ''}; waiting for the pipeline to drain`);
    const ok = await drained(pool, say, giveUpDraining.signal);
    return ok && (!opts.withRegistry || (await shipmentsApplied(pool, config.kafka.brokers, shipmentsTopic, say))) ? 0 : 1;
  } finally {
    await stopChildWorkers(workers);
    await pool.end();
    if (registryStarted && !opts.keepStack && (await stopSchemaRegistry(cachePaths(config.local.cacheDir)))) say('stopped the Schema Registry this demo started');
    if (started.length && !opts.keepStack) say(`stopped services this demo started: ${(await stackDown(config, started)).join(', ')}`);
  }
}

/** Every shipment enqueued is recorded by the consumer, and one on the topic is in the registry's wire format (what it looks like is shown). */
async function shipmentsApplied(pool: import('pg').Pool, brokers: string[], topic: string, say: (m: string) => void): Promise<boolean> {
  const orders = await shipmentsToRecord(pool);
  const deadline = Date.now() + 60_000;
  let recorded = await countRecorded(pool, orders);
  while (recorded < orders.length && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    recorded = await countRecorded(pool, orders);
  }
  const shown = await describeOneShipment(new Kafka({ clientId: 'demo-shipment-peek', brokers, logLevel: 0 }), topic);
  say(`a shipment on ${topic}: ${shown.text}`);
  say(`${recorded} of ${orders.length} shipments recorded by the consumer, each decoded through the registry`);
  return shown.framed && recorded === orders.length;
}

function line(s: PipelineStats): string {
  return `confirmed ${s.confirmedPayments} | outbox pending ${s.outboxPending}, parked ${s.outboxParked} | inbox parked ${s.inboxParked} | credited ${s.balanceTotal} of ${s.confirmedTotal} confirmed (minor units)`;
}

/**
 * Every confirmed payment credited exactly once: each account's balance is the sum of its own
 * confirmed payments (a matching total alone could hide a double credit offset by a lost one).
 */
async function drained(pool: import('pg').Pool, say: (m: string) => void, giveUp: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  let stats = await readPipelineStats(pool);
  let mismatched = await mismatchedAccounts(pool);
  while (Date.now() < deadline && !giveUp.aborted && (stats.outboxPending > 0 || mismatched.length > 0)) {
    await new Promise((r) => setTimeout(r, 1000));
    stats = await readPipelineStats(pool);
    mismatched = await mismatchedAccounts(pool);
  }
  say(line(stats));
  if (stats.outboxPending === 0 && mismatched.length === 0) {
    say(
      `all ${stats.confirmedPayments} confirmed payments are credited exactly once: each of ${await countAccountsWithPayments(pool)} accounts' balance ` +
        `equals its confirmed payments; balances total ${stats.balanceTotal} = confirmed total ${stats.confirmedTotal}`,
    );
    return true;
  }
  const shown = mismatched.slice(0, 5).map((m) => `account ${m.accountId}: balance ${m.balance}, confirmed ${m.confirmed}`);
  say(`NOT drained${giveUp.aborted ? '' : ' after 120 s'}: ${stats.outboxPending} events pending, ${mismatched.length} accounts off (${shown.join('; ')})`);
  return false;
}

/**
 * Shards left running by an earlier demo may have been written by older workflow code; replaying
 * them with this code fails (nondeterminism) and they stall. Give the worker a few seconds to
 * try, then restart any shard whose workflow task keeps failing (safe: progress lives in the table).
 */
async function restartStuckShards(control: RelayControlOptions, shardCount: number, say: (m: string) => void) {
  await new Promise((r) => setTimeout(r, 5000));
  const stuck = await stuckShards(control, shardCount);
  if (stuck.length === 0) return;
  say(`relay shards [${stuck.map((s) => s.shardIndex).join(', ')}] are stuck (workflow task failing, e.g. after a code change): restarting them`);
  await restartShards(control, stuck.map((s) => s.shardIndex), shardCount);
}

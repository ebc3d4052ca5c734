import assert from 'node:assert/strict';
import net from 'node:net';
import { startBalancer } from '../../tools/local-stack/temporal-cluster/balancer';
import { CLUSTER_DATABASES, CLUSTER_HISTORY_SHARDS, clusterHosts, clusterPorts } from '../../tools/local-stack/temporal-cluster/layout';
import { temporalServerConfig } from '../../tools/local-stack/temporal-server/server-config';

describe('Temporal cluster layout (TEMPORAL_SERVER=cluster)', () => {
  it('runs two frontends, two history hosts, matching and worker, each on ports of its own inside the ten from LOCAL_TEMPORAL_PORT', () => {
    const hosts = clusterHosts(7373);
    assert.deepEqual(hosts.map((h) => h.service), ['frontend', 'frontend', 'history', 'history', 'matching', 'worker']);
    const ports = clusterPorts(7373);
    assert.equal(new Set(ports).size, ports.length, 'no port used twice');
    const grpcAndHttp = hosts.flatMap((h) => [h.ports.grpc, ...(h.ports.http ? [h.ports.http] : [])]);
    assert.ok(grpcAndHttp.every((p) => p > 7373 && p < 7383), `gRPC and HTTP ports within 7374–7382: ${grpcAndHttp.join(', ')}`);
    assert.ok(CLUSTER_HISTORY_SHARDS > hosts.filter((h) => h.service === 'history').length, 'more shards than history hosts');
  });

  it('gives each process a config for its one service, reaching the frontends through the balancer, on the cluster\'s own databases', () => {
    const host = clusterHosts(7373).find((h) => h.name === 'history-2')!;
    const config = temporalServerConfig({
      frontendPort: 7374,
      database: { host: '127.0.0.1', port: 5432, user: 'outbox' },
      dynamicConfigFile: '/x',
      historyShards: CLUSTER_HISTORY_SHARDS,
      services: { history: host.ports },
      publicAddress: '127.0.0.1:7373',
      databases: CLUSTER_DATABASES,
      maxConns: host.maxConns,
    });
    assert.deepEqual(Object.keys(config.services), ['history']);
    assert.equal(config.services.history?.rpc.grpcPort, host.ports.grpc);
    assert.equal(config.publicClient.hostPort, '127.0.0.1:7373');
    assert.equal(config.persistence.numHistoryShards, 8);
    assert.equal(config.persistence.datastores['postgres-default'].sql.databaseName, 'temporal_cluster');
  });
});

describe('the frontends\' TCP balancer', () => {
  const servers: net.Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  /** A server answering every connection with its name. */
  async function named(name: string): Promise<{ server: net.Server; port: number }> {
    const server = net.createServer((s) => s.end(name));
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: (server.address() as net.AddressInfo).port };
  }
  const ask = (port: number) =>
    new Promise<string>((resolve, reject) => {
      let data = '';
      const s = net.connect({ port, host: '127.0.0.1' });
      s.on('data', (d) => (data += d));
      s.on('close', () => resolve(data));
      s.on('error', reject);
    });

  it('spreads connections over the frontends, and sends them all to the live one while the other is down', async () => {
    const a = await named('a');
    const b = await named('b');
    const balancer = await startBalancer({ host: '127.0.0.1', port: 0, upstreams: [a, b].map((u) => ({ host: '127.0.0.1', port: u.port })) });
    try {
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push(await ask(balancer.port));
      assert.deepEqual(answers.sort(), ['a', 'a', 'b', 'b']);
      await new Promise<void>((r) => a.server.close(() => r()));
      const during = [];
      for (let i = 0; i < 4; i++) during.push(await ask(balancer.port));
      assert.deepEqual(during, ['b', 'b', 'b', 'b']);
    } finally {
      await balancer.close();
    }
  });
});

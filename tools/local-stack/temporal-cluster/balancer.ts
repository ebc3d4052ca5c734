import net from 'node:net';

// The one address clients use in front of the cluster's frontends, as a production cluster puts
// a load balancer there: each new TCP connection goes to the next frontend in turn, and to the
// one after it when that one refuses, so a frontend that is restarting costs a reconnect, never
// an error a client sees. gRPC keeps its connections open, so balancing by connection spreads
// clients, not calls; a dropped connection is re-made through here and lands on a live frontend.

export interface Upstream {
  host: string;
  port: number;
}

export interface Balancer {
  port: number;
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 2000;

export function startBalancer(opts: { host: string; port: number; upstreams: Upstream[] }): Promise<Balancer> {
  let next = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.pause();
    const first = next++ % opts.upstreams.length;
    const order = opts.upstreams.map((_, i) => opts.upstreams[(first + i) % opts.upstreams.length]!);
    connectFirst(order, client);
  });
  function connectFirst(order: Upstream[], client: net.Socket) {
    const [target, ...rest] = order;
    if (!target || client.destroyed) {
      client.destroy();
      return;
    }
    const upstream = net.connect({ host: target.host, port: target.port });
    upstream.setTimeout(CONNECT_TIMEOUT_MS, () => upstream.destroy(new Error('connect timeout')));
    let connected = false;
    upstream.once('error', () => {
      if (!connected) connectFirst(rest, client);
    });
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      upstream.setNoDelay(true);
      client.setNoDelay(true);
      open.add(upstream);
      upstream.once('close', () => open.delete(upstream));
      // Either side closing or failing ends both, so the client re-connects through here.
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.once('close', () => client.destroy());
      client.once('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
      client.resume();
    });
  }
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            for (const s of open) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

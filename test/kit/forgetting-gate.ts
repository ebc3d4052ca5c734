import net from 'node:net';

interface Pair {
  client: net.Socket;
  server: net.Socket;
  frozen: boolean;
  /** Bytes from the client so far. */
  sent: number;
}

/**
 * A plain TCP relay that can forget: `forgetOpenConnections` freezes every connection open at
 * that moment, as a NAT, load balancer or conntrack table that lost its state does. A frozen
 * connection's client end stays open and silent (its bytes are read and dropped, so it never sees
 * back-pressure or a close), the server end is dropped; connections made afterwards pass. The
 * client learns of it only through its own timeouts and keepalives.
 */
export class ForgettingGate {
  private constructor(
    private readonly pairs: Set<Pair>,
    private readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<ForgettingGate> {
    const pairs = new Set<Pair>();
    const server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host);
      const pair: Pair = { client, server: upstream, frozen: false, sent: 0 };
      pairs.add(pair);
      client.on('data', (d: Buffer) => (pair.sent += d.length));
      client.pipe(upstream);
      upstream.pipe(client);
      const closeBoth = () => {
        if (pair.frozen) return;
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', closeBoth).on('close', () => {
        pairs.delete(pair);
        upstream.destroy();
      });
      upstream.on('error', closeBoth).on('close', closeBoth);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new ForgettingGate(pairs, server, (server.address() as net.AddressInfo).port);
  }

  forgetOpenConnections(): void {
    for (const pair of this.pairs) this.freeze(pair);
  }

  /**
   * Freezes only the open connection that carried the most bytes from the client (under traffic,
   * the one the worker sends its work down), as a NAT that lost that one entry; the others go on.
   * Returns false when no connection is open.
   */
  forgetBusiestConnection(): boolean {
    const open = [...this.pairs].filter((p) => !p.frozen);
    if (open.length === 0) return false;
    this.freeze(open.reduce((a, b) => (b.sent > a.sent ? b : a)));
    return true;
  }

  private freeze(pair: Pair) {
    if (pair.frozen) return;
    pair.frozen = true;
    pair.client.unpipe(pair.server);
    pair.server.unpipe(pair.client);
    pair.client.on('data', () => undefined);
    pair.server.destroy();
  }

  frozenCount(): number {
    return [...this.pairs].filter((p) => p.frozen && !p.client.destroyed).length;
  }

  async close(): Promise<void> {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.server.destroy();
    }
    await new Promise((resolve) => this.server.close(resolve));
  }
}

import net from 'node:net';

/**
 * One database address whose server can change, as a managed PostgreSQL's endpoint looks to its
 * clients through a failover: the name stays, the server behind it becomes the promoted replica,
 * and every connection made before the move is dropped (reset), never carried over. A plain TCP
 * forwarder on a loopback port.
 */
export class MovingAddress {
  private readonly sockets = new Set<net.Socket>();
  private constructor(
    private readonly server: net.Server,
    private target: number,
  ) {}

  static async listen(targetPort: number): Promise<MovingAddress> {
    const server = net.createServer();
    const address = new MovingAddress(server, targetPort);
    server.on('connection', (client) => address.forward(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return address;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** `url` (any PostgreSQL URL of the server behind) with this address in place of its host and port. */
  url(url: string): string {
    const u = new URL(url);
    u.hostname = '127.0.0.1';
    u.port = String(this.port);
    return u.toString();
  }

  /** Points the address at `targetPort` and resets every connection made through it so far. */
  moveTo(targetPort: number): void {
    this.target = targetPort;
    for (const s of this.sockets) s.resetAndDestroy();
    this.sockets.clear();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private forward(client: net.Socket) {
    const upstream = net.connect(this.target, '127.0.0.1');
    for (const s of [client, upstream]) {
      this.sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        this.sockets.delete(s);
        // One side gone: the other goes too, as a relayed connection does.
        (s === client ? upstream : client).destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
  }
}

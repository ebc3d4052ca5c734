import net from 'node:net';
import type { ISocketFactory } from 'kafkajs';

/**
 * The connections of one consumer group member, cut for good once it has left (or given up
 * leaving): every open socket destroyed, every new one failing at once. A stopped kafkajs consumer
 * is not done with the group: a fetch still in flight when it stopped comes back later (over a
 * link that healed) to a heartbeat that finds the group rebalancing or the member forgotten, and
 * its run loop then joins again, as a member nobody drives any more, holding partitions it never
 * applies. Behind the fence it cannot reach the broker, which drops it after its session timeout.
 */
export class SocketFence {
  private readonly open = new Set<net.Socket>();
  private fenced = false;

  /** `inner` (the project's socket factory) with every socket it makes tracked, and none after the fence. */
  wrap(inner: ISocketFactory): ISocketFactory {
    return (args) => {
      if (this.fenced) {
        const refused = new net.Socket();
        process.nextTick(() => refused.destroy(new Error('this consumer group member stepped aside: its connections are closed')));
        return refused;
      }
      const socket = inner(args);
      this.open.add(socket);
      socket.once('close', () => this.open.delete(socket));
      return socket;
    };
  }

  get closed(): boolean {
    return this.fenced;
  }

  fence(): void {
    this.fenced = true;
    for (const socket of this.open) socket.destroy();
    this.open.clear();
  }
}

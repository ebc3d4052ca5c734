import { Client } from 'pg';
import { OUTBOX_NOTIFY_CHANNEL, RESCAN_NOTIFY_PAYLOAD } from '../../outbox/notify-channel';

/**
 * One LISTEN connection per worker process, shared by every shard's idle wait: N idle shards
 * cost one connection, not N. A broken connection is dropped and re-opened by the next wait;
 * notifications sent while it was down are lost, which is why waits also poll (slowly).
 */
export class PendingListener {
  private client?: Client;
  private connecting?: Promise<Client>;
  private readonly waiters = new Set<() => void>();
  /** Notifications received so far: what lets a waiter see one that came before it waited. */
  private received = 0;
  private readonly rescanHandlers: (() => void)[] = [];

  constructor(private readonly databaseUrl: string) {}

  /** Resolves once LISTEN is active: anything committed after this wakes waiters. */
  async ensureListening(): Promise<void> {
    if (this.client) return;
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    await this.connecting;
  }

  /**
   * Where the notification stream is now. Taken before a poll and given to `wait`, it closes the
   * gap between the two: a commit whose NOTIFY arrives while the poll is in flight (its snapshot
   * too early to see the row) would otherwise wake nobody, and the row would wait out the timeout.
   */
  position(): number {
    return this.received;
  }

  /**
   * Resolves true on a notification (or at once if one arrived after position `since`), false
   * after timeoutMs or when `signal` aborts.
   */
  wait(timeoutMs: number, signal?: AbortSignal, since?: number): Promise<boolean> {
    if (since !== undefined && this.received > since) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (notified: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.waiters.delete(onNotify);
        resolve(notified);
      };
      const onNotify = () => done(true);
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.waiters.add(onNotify);
      signal?.addEventListener('abort', onAbort);
      if (signal?.aborted) done(false);
    });
  }

  /** Called on a notification asking relays to read from the beginning (RESCAN_NOTIFY_PAYLOAD). */
  onRescan(handler: () => void): void {
    this.rescanHandlers.push(handler);
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<Client> {
    const client = new Client({ connectionString: this.databaseUrl });
    const drop = () => {
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (msg) => {
      this.received += 1;
      if (msg.payload === RESCAN_NOTIFY_PAYLOAD) for (const rescan of this.rescanHandlers) rescan();
      for (const wake of [...this.waiters]) wake();
    });
    await client.connect();
    await client.query(`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`);
    this.client = client;
    return client;
  }
}

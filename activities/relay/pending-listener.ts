import { Client, type ClientConfig } from 'pg';
import { DEFAULT_LINK_BOUNDS, type LinkBounds } from '../../src/db/pool';
import { OUTBOX_NOTIFY_CHANNEL, RESCAN_NOTIFY_PAYLOAD } from '../../src/outbox/notify-channel';
import { concernsShard, parsePendingNotification, type PendingNotification, type ShardOfWaiter } from './pending-notification';

// The last notifications kept to answer "has one for my shard come since?"; a waiter further
// behind than this is woken anyway (a spurious wake costs one indexed probe).
const RECENT_KEPT = 256;

/**
 * One LISTEN connection per worker process, shared by every shard's idle wait: N idle shards
 * cost one connection, not N. A broken connection is dropped and re-opened by the next wait;
 * notifications sent while it was down are lost, which is why waits also poll (slowly).
 */
export class PendingListener {
  private client?: Client;
  private connecting?: Promise<Client>;
  /** Each waiter's wake-up, with the shard it waits for (none: any notification wakes it). */
  private readonly waiters = new Map<() => void, ShardOfWaiter | undefined>();
  /** Notifications received so far: what lets a waiter see one that came before it waited. */
  private received = 0;
  /** The last RECENT_KEPT notifications, oldest first; the last one's number is `received`. */
  private readonly recent: PendingNotification[] = [];
  private readonly rescanHandlers: (() => void)[] = [];

  /**
   * `database`: a URL, or a pool's connection settings (a service's own pool). `bounds`: connect
   * timeout and keepalive. LISTEN itself gets no query timeout: the connection idles by design; a
   * dead one costs only latency, as waits poll anyway.
   */
  constructor(
    private readonly database: string | ClientConfig,
    private readonly bounds: LinkBounds = DEFAULT_LINK_BOUNDS,
  ) {}

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
   * after timeoutMs or when `signal` aborts. Given its `shard`, a waiter wakes only for
   * notifications that may concern that shard (pending-notification.ts): one shard's new rows do
   * not make every idle shard of the process poll.
   */
  wait(timeoutMs: number, signal?: AbortSignal, since?: number, shard?: ShardOfWaiter): Promise<boolean> {
    if (since !== undefined && this.notifiedSince(since, shard)) return Promise.resolve(true);
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
      this.waiters.set(onNotify, shard);
      signal?.addEventListener('abort', onAbort);
      if (signal?.aborted) done(false);
    });
  }

  private notifiedSince(since: number, shard: ShardOfWaiter | undefined): boolean {
    const missed = this.received - since;
    if (missed <= 0) return false;
    if (missed > this.recent.length) return true;
    return this.recent.slice(-missed).some((n) => concernsShard(n, shard));
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
    const client = new Client({
      connectionTimeoutMillis: this.bounds.connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: this.bounds.keepAliveIdleMs,
      ...(typeof this.database === 'string' ? { connectionString: this.database } : this.database),
    });
    const drop = () => {
      if (this.client === client) this.client = undefined;
      void client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', drop);
    client.on('notification', (msg) => {
      const notification = parsePendingNotification(msg.payload);
      this.received += 1;
      this.recent.push(notification);
      if (this.recent.length > RECENT_KEPT) this.recent.shift();
      if (msg.payload === RESCAN_NOTIFY_PAYLOAD) for (const rescan of this.rescanHandlers) rescan();
      for (const [wake, shard] of [...this.waiters]) if (concernsShard(notification, shard)) wake();
    });
    await client.connect();
    await client.query(`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`);
    this.client = client;
    return client;
  }
}

import { Client } from 'pg';
import { pinPollPlan } from '../../outbox/queries/poll-plan-settings';

// Kept this long unused, then closed: an idle relay holds no session connection for long.
const KEEP_MS = 30_000;
// More than any worker runs sessions at once (one per shard placed on it).
const MAX_KEPT = 64;

/**
 * The relay sessions' own connections (each holds its shard's lock and runs its polls), kept
 * between sessions on this worker instead of closed. A shard starts a session every 30 s while
 * rows keep coming and after every wake, and each used to open a connection, authenticate (TLS
 * and SCRAM against a managed PostgreSQL) and pin the poll's plan anew: 16 connections a minute
 * for 8 busy shards, and part of every wake's wait.
 *
 * A connection comes back only from a session that ended cleanly, and only once it holds no
 * advisory lock (`pg_advisory_unlock_all`): the next session, perhaps for another shard, starts
 * from nothing but the pinned settings. Sessions run single statements, never a transaction, so
 * a connection given back has none open. One that broke is closed; one that breaks while kept is
 * dropped. `close` ends them all when the worker stops.
 */
export class SessionConnections {
  private readonly kept: { client: Client; timer: NodeJS.Timeout }[] = [];
  private closed = false;

  constructor(private readonly databaseUrl: string) {}

  /** A kept connection, or a new one, connected and pinned. */
  async take(): Promise<Client> {
    const kept = this.kept.pop();
    if (kept) {
      clearTimeout(kept.timer);
      return kept.client;
    }
    const client = new Client({ connectionString: this.databaseUrl });
    // While kept, and until a session listens itself: a broken connection is dropped, never thrown.
    client.on('error', () => this.drop(client));
    try {
      await client.connect();
      // The poll's plan pinned to the pending index (poll-plan-settings.ts says why).
      await pinPollPlan(client);
      return client;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }

  /** Back from a session: kept if `clean` and its locks are released, else closed. */
  async give(client: Client, clean: boolean): Promise<void> {
    const unlocked = clean && this.kept.length < MAX_KEPT && (await client.query('SELECT pg_advisory_unlock_all()').then(() => true, () => false));
    // Checked after the unlock too: the worker may have stopped meanwhile.
    if (!unlocked || this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const timer = setTimeout(() => this.drop(client), KEEP_MS);
    timer.unref();
    this.kept.push({ client, timer });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const { client, timer } of this.kept.splice(0)) {
      clearTimeout(timer);
      await client.end().catch(() => undefined);
    }
  }

  private drop(client: Client): void {
    const i = this.kept.findIndex((k) => k.client === client);
    if (i < 0) return;
    clearTimeout(this.kept[i]!.timer);
    this.kept.splice(i, 1);
    void client.end().catch(() => undefined);
  }
}

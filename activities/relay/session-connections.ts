import { Pool, type PoolClient, type PoolConfig } from 'pg';
import { DEFAULT_LINK_BOUNDS, endPool, linkOptions, type LinkBounds } from '../../src/db/pool';
import { destroyOnReadTimeout } from '../../src/db/read-timeout';
import { sessionApplicationName } from '../../src/outbox/queries/fence-shard-holder';
import { DEFAULT_SCHEMA } from '../../src/db/schema';
import { schemaClientClass } from '../../src/db/schema-client';
import { pinPollPlan } from '../../src/outbox/queries/poll-plan-settings';

// Kept this long unused, then closed: an idle relay holds no session connection for long.
const KEEP_MS = 30_000;
// Far more than any worker runs sessions at once (one per shard placed on it): a bound, not a queue.
const MAX_OPEN = 256;

/**
 * The relay sessions' own connections (each holds its shard's lock and runs its polls), kept
 * between sessions on this worker instead of closed. A shard starts a session every 30 s while
 * rows keep coming and after every wake, and each used to open a connection, authenticate (TLS
 * and SCRAM against a managed PostgreSQL) and pin the poll's plan anew: 16 connections a minute
 * for 8 busy shards, and part of every wake's wait.
 *
 * A pg pool of their own: unlike the worker's pool (src/db/pool.ts) it sets no statement or lock
 * timeout (a session's connection never had one), and each connection is pinned once, before its
 * first session. A connection goes back only from a session that ended cleanly, and only once it
 * holds no advisory lock (`pg_advisory_unlock_all`): the next session, perhaps for another shard,
 * starts from nothing but the pinned settings. Sessions run single statements, never a
 * transaction, so a connection given back has none open. Any other is destroyed (which releases
 * its locks too); one that breaks while kept is dropped by the pool. `close` ends them all when
 * the worker stops.
 */
export class SessionConnections {
  private readonly pool: Pool;
  private readonly pinned = new WeakSet<PoolClient>();
  private readonly out = new Set<PoolClient>();

  /**
   * `database`: a URL, or a pool's connection settings (a service's own pool); `schema`: the
   * library's. `workerId`: named in each connection's application_name, which is how a fence finds
   * a dead worker's sessions. `bounds`: connect and query timeouts and keepalive (src/db/pool.ts
   * `linkOptions`, unless the service's settings name their own); a timed-out connection is destroyed.
   */
  constructor(database: string | PoolConfig, workerId: string, schema: string = DEFAULT_SCHEMA, bounds: LinkBounds = DEFAULT_LINK_BOUNDS) {
    const client = schemaClientClass(schema);
    this.pool = new Pool({
      ...linkOptions(bounds, undefined),
      ...(typeof database === 'string' ? { connectionString: database } : database),
      max: MAX_OPEN,
      idleTimeoutMillis: KEEP_MS,
      application_name: sessionApplicationName(workerId),
      ...(client ? { Client: client } : {}),
    });
    this.pool.on('connect', destroyOnReadTimeout);
    // A kept connection that breaks: the pool has dropped it already; nothing to report.
    this.pool.on('error', () => undefined);
  }

  /** A kept connection, or a new one, connected and pinned. */
  async take(): Promise<PoolClient> {
    const client = await this.pool.connect();
    this.out.add(client);
    if (this.pinned.has(client)) return client;
    // A checked-out connection's errors are its user's; between sessions (the pin, the unlock)
    // there is none, so one that breaks then fails the statement and is destroyed, never thrown.
    client.on('error', () => undefined);
    try {
      // The poll's plan pinned to the pending index (poll-plan-settings.ts says why).
      await pinPollPlan(client);
      this.pinned.add(client);
      return client;
    } catch (err) {
      this.out.delete(client);
      client.release(true);
      throw err;
    }
  }

  /** Back from a session: kept if `clean` and its locks are released, else destroyed. */
  async give(client: PoolClient, clean: boolean): Promise<void> {
    const unlocked = clean && (await client.query('SELECT pg_advisory_unlock_all()').then(() => true, () => false));
    this.out.delete(client);
    client.release(!unlocked);
  }

  /**
   * Drops the socket of every connection a session holds now, so a statement waiting on a dead
   * link fails at once instead of at its query timeout (35 s): the worker is stepping aside, and
   * its drain, hence its rejoin after the heal, would wait for those statements. The backends
   * stay until PostgreSQL or a fence ends them; their locks go with them.
   */
  abandonInUse(): void {
    for (const client of this.out) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
  }

  async close(): Promise<void> {
    await endPool(this.pool);
  }
}

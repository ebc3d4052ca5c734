import path from 'node:path';
import type { Pool } from 'pg';
import { migrateWithExample } from './database';
import { createPool } from '../../src/db/pool';
import { cachePaths } from '../../tools/local-stack/paths';
import { ensurePostgres, stopPostgres } from '../../tools/local-stack/postgres';
import {
  createReplica,
  killPrimary,
  promoteReplica,
  setSynchronousStandby,
  stopReplica,
  stopWalShipping,
  waitForReplay,
  type Replica,
} from '../../tools/local-stack/postgres-replica';
import { isolatedStack, type IsolatedStack } from './isolated-stack';
import { MovingAddress } from './moving-address';

const quiet = () => undefined;

/**
 * A PostgreSQL cluster of its own (the shared stack's is never killed), a streaming replica of
 * it, and one address in front of them that every client uses: what a managed PostgreSQL with a
 * standby looks like from outside. `failover()` is the provider's: the primary dies, the replica
 * is promoted, the address moves, connections made before are dropped.
 */
export class FailoverRig {
  private constructor(
    readonly stack: IsolatedStack,
    readonly replica: Replica,
    readonly address: MovingAddress,
    /** The owner's URL through the moving address: what producers, workers and the CLI use. */
    readonly url: string,
    /** A pool on `url` (connections dropped at the failover are replaced by new ones). */
    readonly pool: Pool,
  ) {}

  static async create(opts: { synchronous: boolean; accounts: number[] }): Promise<FailoverRig> {
    const stack = isolatedStack();
    const paths = cachePaths(stack.dir);
    await ensurePostgres(stack.config, paths, quiet);
    // The library's schema and the example's tables (the traffic credits accounts).
    await migrateWithExample(stack.config.database.url);
    const seed = createPool(stack.config.database.url, { max: 1 });
    try {
      await seed.query('INSERT INTO accounts (account_id) SELECT unnest($1::bigint[])', [opts.accounts]);
    } finally {
      await seed.end();
    }
    // Its port is one the isolated stack leaves free (it takes five from its base).
    const replica = await createReplica(stack.config, paths, { dir: path.join(stack.dir, 'replica'), port: stack.config.local.pgPort + 5, name: 'failover_standby' }, quiet);
    await setSynchronousStandby(stack.config, paths, replica, opts.synchronous);
    const address = await MovingAddress.listen(stack.config.local.pgPort);
    const url = address.url(stack.config.database.url);
    return new FailoverRig(stack, replica, address, url, createPool(url, { max: 4, connectionTimeoutMillis: 2000 }));
  }

  private get paths() {
    return cachePaths(this.stack.dir);
  }

  /** Waits until the replica holds everything committed so far. */
  caughtUp(): Promise<void> {
    return waitForReplay(this.stack.config, this.paths, this.replica);
  }

  /** From here on the primary's commits stay on the primary (an asynchronous standby falling behind). */
  stopShipping(): Promise<void> {
    return stopWalShipping(this.replica);
  }

  /** kill -9 of the primary, promotion of the replica, then the address moves to it. */
  async failover(): Promise<void> {
    killPrimary(this.paths);
    await promoteReplica(this.replica);
    this.address.moveTo(this.replica.port);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
    await this.address.close();
    await stopReplica(this.replica).catch(() => undefined);
    await stopPostgres(this.paths).catch(() => undefined);
    this.stack.remove();
  }
}

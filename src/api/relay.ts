// Public API: the relay. Run the worker (any number of processes), then start the shard
// workflows once; the Temporal CLI commands in docs/relay.md do the same by hand.
import { Client, type Connection } from '@temporalio/client';
import type { Pool } from 'pg';
import { connectTemporalClient } from '../temporal/connect-client';
import { databaseUrl, type Config } from '../config/resolve';
import type { SqlExecutor } from '../db/executor';
import { createPool, databaseTimeouts } from '../db/pool';
import { configuredRelayControl, startRelays } from '../outbox/relay-control';
import { readLayout } from '../outbox/queries/relay-layout';

export { runRelayWorker, type RelayWorkerOptions } from '../../workers/relay.worker';
export {
  startRelays,
  configuredRelayControl,
  stopRelays,
  reshardRelays,
  relayStatuses,
  stuckShards,
  restartShards,
  RelayControlError,
  type RelayControlOptions,
} from '../outbox/relay-control';

/**
 * The shard count to start: the outbox's recorded layout, else relay.shards (a fresh outbox). An
 * outbox laid out before the default changed keeps its count until someone reshards it.
 */
export async function relayShardCount(db: SqlExecutor, config: Config): Promise<number> {
  return (await readLayout(db)) ?? config.relay.shards;
}

export interface StartRelayShardsOptions {
  /** Shard i's workflow id (default relay.workflowIdPrefix-i, outbox-relay-shard-i): give each outbox its own names when several share one namespace. */
  workflowId?: (shardIndex: number) => string;
  /** Your own pool, to read the recorded layout with; never ended here. */
  pool?: Pool;
  /** Your own Temporal client; never closed here. */
  client?: Client;
  /** Or your own connection, for a client on temporal.namespace; never closed here. */
  connection?: Connection;
}

/**
 * Starts the relay shards that are not running yet, on the relay task queue; safe to call on every
 * deploy. The shard count is the outbox's recorded layout, else relay.shards (a fresh outbox), as
 * `relay start` does: an outbox laid out before the default changed keeps its count until
 * someone reshards it (`relay reshard --shards N`). Every call waits at most temporal.callTimeoutMs.
 */
export async function startRelayShards(config: Config, opts: StartRelayShardsOptions = {}) {
  const own = opts.client || opts.connection ? undefined : await connectTemporalClient(config);
  const client = opts.client ?? (opts.connection ? new Client({ connection: opts.connection, namespace: config.temporal.namespace }) : own!.client);
  const pool = opts.pool ?? createPool(databaseUrl(config), { schema: config.database.schema, max: 1, ...databaseTimeouts(config) });
  try {
    const shards = await relayShardCount(pool, config);
    const control = configuredRelayControl(config, client, pool, opts.workflowId ? { workflowId: opts.workflowId } : {});
    return await client.connection.withDeadline(Date.now() + config.temporal.callTimeoutMs, () => startRelays(control, shards));
  } finally {
    if (!opts.pool) await pool.end();
    await own?.connection.close();
  }
}

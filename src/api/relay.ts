// Public API: the relay. Run the worker (any number of processes), then start the shard
// workflows once; the Temporal CLI commands in docs/relay.md do the same by hand.
import { connectTemporalClient, withCallDeadline } from '../temporal/connect-client';
import type { Config } from '../config/env';
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
 * The shard count to start: the outbox's recorded layout, else RELAY_SHARDS (a fresh outbox). An
 * outbox laid out before the default changed keeps its count until someone reshards it.
 */
export async function relayShardCount(db: SqlExecutor, config: Config): Promise<number> {
  return (await readLayout(db)) ?? config.relay.shards;
}

/**
 * Starts the relay shards that are not running yet, on the relay task queue; safe to call on every
 * deploy. The shard count is the outbox's recorded layout, else RELAY_SHARDS (a fresh outbox), as
 * `relay start` does: an outbox laid out before the default changed keeps its count until
 * someone reshards it (`relay reshard --shards N`). `workflowId` names shard i (default RELAY_WORKFLOW_ID_PREFIX-i, outbox-relay-shard-i):
 * give each outbox (database) its own names when several share one Temporal namespace.
 */
export async function startRelayShards(config: Config, opts: { workflowId?: (shardIndex: number) => string } = {}) {
  const { connection, client } = await connectTemporalClient(config);
  const pool = createPool(config.database.url, { schema: config.database.schema, max: 1, ...databaseTimeouts(config) });
  try {
    const shards = await relayShardCount(pool, config);
    return await withCallDeadline(connection, config, () => startRelays(configuredRelayControl(config, client, pool, opts.workflowId ? { workflowId: opts.workflowId } : {}), shards));
  } finally {
    await pool.end();
    await connection.close();
  }
}

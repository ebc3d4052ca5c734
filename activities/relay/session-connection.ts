import type { PoolClient } from 'pg';
import type { SessionConnections } from './session-connections';

export interface SessionConnection {
  readonly client: PoolClient;
  /** Back to the sessions' pool, which releases the shard's lock either way: kept only if `clean`. */
  giveBack(clean: boolean): Promise<void>;
}

/**
 * The connection a session runs the shard's polls and counts on, their plan pinned to the pending
 * index (poll-plan-settings.ts says why the planner goes wrong under a large backlog); it is one a
 * session before this one left, when there is one (session-connections.ts). `onBroken` hears of
 * the connection failing while the session has it.
 */
export async function takeSessionConnection(connections: SessionConnections, onBroken: () => void): Promise<SessionConnection> {
  const client = await connections.take();
  client.on('error', onBroken);
  return {
    client,
    async giveBack(clean) {
      client.removeListener('error', onBroken);
      // Releases the shard's lock either way: kept connections are unlocked first, the others
      // closed (one round trip fewer than unlocking the shard and then everything).
      await connections.give(client, clean);
    },
  };
}

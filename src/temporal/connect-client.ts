import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config/env';
import { temporalConnectionOptions } from './connection-options';

// The one way the CLI and the app connect to Temporal as a client: the managed-service settings
// (src/temporal/connection-options.ts) plus a connect timeout, so an unreachable server is an error
// after TEMPORAL_CONNECT_TIMEOUT_MS instead of a hang.

export async function connectTemporalClient(config: Config): Promise<{ connection: Connection; client: Client }> {
  const connection = await Connection.connect(temporalConnectionOptions(config, { connectTimeout: config.temporal.connectTimeoutMs }));
  return { connection, client: new Client({ connection, namespace: config.temporal.namespace }) };
}

/**
 * Runs `work` with a deadline on every Temporal call it makes (TEMPORAL_CALL_TIMEOUT_MS unless
 * given): a server that stops answering, or a workflow no worker picks up, ends in a
 * DEADLINE_EXCEEDED error the caller can report rather than a wait without end.
 */
export function withCallDeadline<T>(connection: Connection, config: Config, work: () => Promise<T>, timeoutMs = config.temporal.callTimeoutMs): Promise<T> {
  return connection.withDeadline(Date.now() + timeoutMs, work);
}

/** Connects, runs `work` with the client under the call deadline, and closes the connection. */
export async function withTemporalClient<T>(config: Config, work: (client: Client) => Promise<T>, timeoutMs = config.temporal.callTimeoutMs): Promise<T> {
  const { connection, client } = await connectTemporalClient(config);
  try {
    return await withCallDeadline(connection, config, () => work(client), timeoutMs);
  } finally {
    await connection.close();
  }
}

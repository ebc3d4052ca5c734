import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../../src/config/env';
import { temporalConnectionOptions } from '../../src/temporal/connection-options';

/** A client on the configured Temporal server; close its connection in `after`. */
export async function testTemporalClient(): Promise<{ client: Client; connection: Connection }> {
  const config = loadConfig();
  const connection = await Connection.connect(temporalConnectionOptions(config));
  return { client: new Client({ connection, namespace: config.temporal.namespace }), connection };
}

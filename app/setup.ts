import { Connection } from '@temporalio/client';
import type { Config } from '../config/env';
import { migrate } from '../db/migrate';
import { ensureSearchAttributes } from '../infra/search-attributes';
import { createKafka } from '../kafka/client';
import { ensureTopics } from '../kafka/topics';

/**
 * Everything the services need before workers start, against local or external services alike:
 * schema, topics, search attributes. Each step is idempotent, so it runs on every start.
 */
export async function setUp(config: Config): Promise<{ migrations: string[]; topics: string[]; searchAttributes: string[] }> {
  const migrations = (await migrate(config.database.url)).map((m) => `${m.version}_${m.name}`);
  const topics = await ensureTopics(createKafka(config, 'outbox-setup'), config);
  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    const searchAttributes = await ensureSearchAttributes(connection, config.temporal.namespace);
    return { migrations, topics, searchAttributes };
  } finally {
    await connection.close();
  }
}

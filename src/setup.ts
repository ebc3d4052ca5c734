import { connectTemporalClient, withCallDeadline } from './temporal/connect-client';
import type { Config } from './config/env';
import { migrate } from './db/migrate';
import { ensureSearchAttributes } from './temporal/search-attributes';
import { createKafka } from './kafka/client';
import { describeReconciliation, reconcileTopicRetention } from './kafka/reconcile-topic-retention';
import { ensureTopics } from './kafka/topics';
import { databaseUrl } from './config/resolve';

/**
 * Everything the services need before workers start, against local or external services alike:
 * schema, topics, search attributes. Each step is idempotent, so it runs on every start.
 * `keyField`: the payload field a row inserted without a key is keyed by (migrations/0053).
 */
export async function setUp(
  config: Config,
  options: { keyField?: string } = {},
): Promise<{ migrations: string[]; topics: string[]; topicRetention: string; searchAttributes: string[] }> {
  const migrations = (await migrate(databaseUrl(config), { schema: config.database.schema, keyField: options.keyField })).map((m) => `${m.version}_${m.name}`);
  const kafka = createKafka(config, 'outbox-setup');
  const topics = await ensureTopics(kafka, config);
  // An existing topic may keep messages longer than the inbox remembers them: bring it in line.
  const topicRetention = (await reconcileTopicRetention(kafka, config)).map(describeReconciliation).join('; ');
  const { connection } = await connectTemporalClient(config);
  try {
    const searchAttributes = await withCallDeadline(connection, config, () => ensureSearchAttributes(connection, config.temporal.namespace));
    return { migrations, topics, topicRetention, searchAttributes };
  } finally {
    await connection.close();
  }
}

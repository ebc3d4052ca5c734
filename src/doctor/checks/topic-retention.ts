import { Kafka, logLevel } from 'kafkajs';
import { age } from '../format-values';
import { checkTopicRedeliveryHorizon } from '../../kafka/topic-retention';
import { result, type Check, type Fact, type Problem } from '../types';
import { eventTopics } from '../../kafka/topics';
import { kafkaConnectionOptions } from '../../kafka/connection-options';

/**
 * Each events topic's real retention on the broker (the default topic and every routed one)
 * against the inbox horizon: a topic that keeps messages longer than the inbox remembers their
 * ids (minus the allowed lag) can redeliver an event the inbox has forgotten, which would be
 * credited twice.
 */
export const topicRetentionCheck: Check = async ({ config }) => {
  const topics = eventTopics(config.kafka);
  const title = `retention of topic${topics.length > 1 ? 's' : ''} ${topics.join(', ')} vs the inbox horizon`;
  const kafka = new Kafka({ clientId: 'outbox-doctor', ...kafkaConnectionOptions(config), logLevel: logLevel.NOTHING, connectionTimeout: 3000, retry: { retries: 1 } });
  const admin = kafka.admin();
  try {
    await admin.connect();
    const existing = new Set(await admin.listTopics());
    const facts: Fact[] = [];
    const problems: Problem[] = [];
    for (const topic of topics) {
      if (!existing.has(topic)) {
        problems.push({ severity: 'warn', message: `the topic ${topic} does not exist yet`, fix: 'npx temporal-outbox setup' });
        continue;
      }
      const { retention, verdict } = await checkTopicRedeliveryHorizon(admin, config, topic);
      facts.push({ label: `topic ${topic} retention (broker)`, value: retention.retentionMs, display: retention.retentionMs === null ? `for ever (cleanup.policy=${retention.cleanupPolicy})` : age(retention.retentionMs) });
      if (!verdict.safe) problems.push({ severity: 'fail', message: verdict.problem, fix: verdict.fix });
    }
    facts.push(
      { label: 'allowed consumer lag', value: config.kafka.maxConsumerLagMs, display: age(config.kafka.maxConsumerLagMs) },
      { label: 'inbox horizon', value: config.inbox.retentionMs, display: age(config.inbox.retentionMs) },
    );
    return result('topic-retention', title, facts, problems);
  } catch (err) {
    return result('topic-retention', title, [], [{ severity: 'warn', message: `Kafka could not be asked: ${(err as Error).message}`, fix: 'check KAFKA_BROKERS and that the broker runs (npm run stack:status)' }]);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
};

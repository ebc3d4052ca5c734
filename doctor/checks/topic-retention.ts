import { Kafka, logLevel } from 'kafkajs';
import { age } from '../format-values';
import { checkTopicRedeliveryHorizon } from '../../kafka/topic-retention';
import { result, type Check } from '../types';
import { kafkaConnectionOptions } from '../../kafka/connection-options';

/**
 * The events topic's real retention on the broker against the inbox horizon: a topic that keeps
 * messages longer than the inbox remembers their ids (minus the allowed lag) can redeliver an
 * event the inbox has forgotten, which would be credited twice.
 */
export const topicRetentionCheck: Check = async ({ config }) => {
  const { topic } = config.kafka;
  const title = `retention of topic ${topic} vs the inbox horizon`;
  const kafka = new Kafka({ clientId: 'outbox-doctor', ...kafkaConnectionOptions(config), logLevel: logLevel.NOTHING, connectionTimeout: 3000, retry: { retries: 1 } });
  const admin = kafka.admin();
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(topic)) {
      return result('topic-retention', title, [], [{ severity: 'warn', message: `the topic ${topic} does not exist yet`, fix: 'npm run outbox -- setup' }]);
    }
    const { retention, verdict } = await checkTopicRedeliveryHorizon(admin, config);
    const facts = [
      { label: 'topic retention (broker)', value: retention.retentionMs, display: retention.retentionMs === null ? `for ever (cleanup.policy=${retention.cleanupPolicy})` : age(retention.retentionMs) },
      { label: 'allowed consumer lag', value: config.kafka.maxConsumerLagMs, display: age(config.kafka.maxConsumerLagMs) },
      { label: 'inbox horizon', value: config.inbox.retentionMs, display: age(config.inbox.retentionMs) },
    ];
    return result('topic-retention', title, facts, verdict.safe ? [] : [{ severity: 'fail', message: verdict.problem, fix: verdict.fix }]);
  } catch (err) {
    return result('topic-retention', title, [], [{ severity: 'warn', message: `Kafka could not be asked: ${(err as Error).message}`, fix: 'check KAFKA_BROKERS and that the broker runs (npm run stack:status)' }]);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
};

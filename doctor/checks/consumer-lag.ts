import { Kafka, logLevel } from 'kafkajs';
import { age, count } from '../format-values';
import { result, type Check, type Problem } from '../types';

export const LAST_CREDIT_SQL = `SELECT extract(epoch FROM now() - max(processed_at)) * 1000 AS idle_ms FROM inbox_processed_events WHERE consumer = $1`;

/**
 * How far the consumer group is behind the events topic, in messages, and how long ago it last
 * applied anything. Lag that stops moving for longer than CONSUMER_MAX_LAG_MS breaks the inbox
 * horizon's assumption (retention + lag), so it fails the report.
 */
export const consumerLagCheck: Check = async ({ db, config }) => {
  const { topic, consumerGroup, maxConsumerLagMs } = config.kafka;
  const title = `consumer group ${consumerGroup} on ${topic}`;
  // Few retries and short timeouts: a doctor that waits minutes for a dead broker helps nobody.
  const kafka = new Kafka({ clientId: 'outbox-doctor', brokers: config.kafka.brokers, logLevel: logLevel.NOTHING, connectionTimeout: 3000, retry: { retries: 1 } });
  const admin = kafka.admin();
  let lag: { partition: number; lag: number }[];
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(topic)) {
      return result('consumer-lag', title, [], [{ severity: 'warn', message: `the topic ${topic} does not exist yet`, fix: 'npm run outbox -- setup' }]);
    }
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId: consumerGroup, topics: [topic] });
    const at = new Map(committed?.partitions.map((p) => [p.partition, p.offset === '-1' ? Number(ends.find((e) => e.partition === p.partition)?.low ?? 0) : Number(p.offset)]));
    lag = ends.map((e) => ({ partition: e.partition, lag: Math.max(0, Number(e.high) - (at.get(e.partition) ?? Number(e.low))) }));
  } catch (err) {
    return result('consumer-lag', title, [], [{ severity: 'warn', message: `Kafka could not be asked: ${(err as Error).message}`, fix: 'check KAFKA_BROKERS and that the broker runs (npm run stack:status)' }]);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }

  const total = lag.reduce((sum, p) => sum + p.lag, 0);
  const idle = (await db.query(LAST_CREDIT_SQL, [config.consumer.inboxName])).rows[0]!.idle_ms;
  const idleMs = idle === null ? null : Number(idle);
  const problems: Problem[] = [];
  if (total > 0 && (idleMs === null || idleMs > maxConsumerLagMs)) {
    problems.push({
      severity: 'fail',
      message: `${count(total)} events wait on ${topic} and nothing was applied for ${idleMs === null ? 'ever' : age(idleMs)}, longer than CONSUMER_MAX_LAG_MS (${age(maxConsumerLagMs)}): the inbox horizon assumes consumers keep up`,
      fix: 'start consumer workers (npm run worker:consumer); see their logs in .cache/logs/workers/ or your supervisor',
    });
  }
  return result(
    'consumer-lag',
    title,
    [
      { label: 'lag (messages)', value: total, display: count(total) },
      { label: 'most behind partition', value: Math.max(0, ...lag.map((p) => p.lag)) },
      { label: 'last credit applied', value: idleMs, display: idleMs === null ? 'never' : `${age(idleMs)} ago` },
    ],
    problems,
  );
};

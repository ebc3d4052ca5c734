import { Kafka, logLevel } from 'kafkajs';
import { measureGroupLag, type GroupLag } from '../../observability/consumer-group-lag';
import { age, count } from '../format-values';
import { result, type Check, type Fact, type Problem } from '../types';
import { kafkaConnectionOptions } from '../../kafka/connection-options';

export const LAST_CREDIT_SQL = `SELECT extract(epoch FROM now() - max(processed_at)) * 1000 AS idle_ms FROM temporal_outbox.inbox_processed_events WHERE consumer = $1`;

/** Partitions with something waiting, most behind first: "partition 3: 1,200 waiting, oldest 4.0 min". */
function behind(lag: GroupLag, limit = 6): string {
  const waiting = lag.partitions.filter((p) => p.lag > 0).sort((a, b) => b.lag - a.lag);
  const shown = waiting.slice(0, limit).map((p) => `partition ${p.partition}: ${count(p.lag)} waiting, oldest ${age(p.oldestWaitingAgeMs)}`);
  return shown.join('; ') + (waiting.length > limit ? `; and ${waiting.length - limit} more partitions` : '');
}

/**
 * How far the consumer group is behind the events topic, per partition, and whether anyone is
 * consuming at all — read from Kafka, so it works when every consumer is down. Three findings:
 * events wait and the group has no members (warns at once, fails once the oldest has waited
 * DOCTOR_MAX_CONSUMER_WAIT_MS); members exist but the oldest waiting event is older than that
 * (they fall behind: lag that keeps growing ages its oldest event without bound); and nothing
 * applied for CONSUMER_MAX_LAG_MS, which breaks the inbox horizon's assumption (retention + lag).
 */
export const consumerLagCheck: Check = async ({ db, config }) => {
  const { topic, consumerGroup, maxConsumerLagMs } = config.kafka;
  const maxWaitMs = config.doctor.maxConsumerWaitMs;
  const title = `consumer group ${consumerGroup} on ${topic}`;
  // Few retries and short timeouts: a doctor that waits minutes for a dead broker helps nobody.
  const kafka = new Kafka({ clientId: 'outbox-doctor', ...kafkaConnectionOptions(config), logLevel: logLevel.NOTHING, connectionTimeout: 3000, retry: { retries: 1 } });
  const admin = kafka.admin();
  let lag: GroupLag;
  try {
    await admin.connect();
    if (!(await admin.listTopics()).includes(topic)) {
      return result('consumer-lag', title, [], [{ severity: 'warn', message: `the topic ${topic} does not exist yet`, fix: 'npx temporal-outbox setup' }]);
    }
    lag = await measureGroupLag(admin, topic, consumerGroup);
  } catch (err) {
    return result('consumer-lag', title, [], [{ severity: 'warn', message: `Kafka could not be asked: ${(err as Error).message}`, fix: 'check KAFKA_BROKERS and that the broker runs (npm run stack:status)' }]);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }

  const total = lag.totalLag;
  const oldest = lag.oldestWaitingAgeMs;
  const idle = (await db.query(LAST_CREDIT_SQL, [config.consumer.inboxName])).rows[0]!.idle_ms;
  const idleMs = idle === null ? null : Number(idle);
  const waitedTooLong = oldest !== null && oldest >= maxWaitMs;
  const problems: Problem[] = [];
  if (total > 0 && lag.members === 0) {
    problems.push({
      severity: waitedTooLong ? 'fail' : 'warn',
      message: `${count(total)} events wait on ${topic} and the consumer group ${consumerGroup} has no members: nothing consumes them (${behind(lag)})`,
      fix: 'start consumer workers (npm run worker:consumer); if they run, check their KAFKA_TOPIC and CONSUMER_GROUP and their logs (.cache/logs/workers/ or your supervisor)',
    });
  } else if (total > 0 && waitedTooLong) {
    problems.push({
      severity: 'fail',
      message: `the consumers fall behind: the oldest waiting event is ${age(oldest)} old, over DOCTOR_MAX_CONSUMER_WAIT_MS (${age(maxWaitMs)}) (${behind(lag)})`,
      fix: `add consumer workers (up to ${lag.partitions.length}, the partition count) or look for a stuck one: its credit workflows in the Temporal UI, its log`,
    });
  }
  if (total > 0 && (idleMs === null || idleMs > maxConsumerLagMs)) {
    problems.push({
      severity: 'fail',
      message: `${count(total)} events wait on ${topic} and nothing was applied for ${idleMs === null ? 'ever' : age(idleMs)}, longer than CONSUMER_MAX_LAG_MS (${age(maxConsumerLagMs)}): the inbox horizon assumes consumers keep up`,
      fix: 'start consumer workers (npm run worker:consumer); see their logs in .cache/logs/workers/ or your supervisor',
    });
  }
  const facts: Fact[] = [
    { label: 'group members', value: lag.members, display: `${lag.members} (${lag.state})` },
    { label: 'lag (messages)', value: total, display: count(total) },
    { label: 'oldest waiting event', value: oldest, display: oldest === null ? 'none waiting' : `${age(oldest)} old` },
    ...lag.partitions.map((p) => ({
      label: `partition ${p.partition}`,
      value: p.lag,
      display: p.lag === 0 ? 'caught up' : `${count(p.lag)} waiting, oldest ${age(p.oldestWaitingAgeMs)} old`,
    })),
    { label: 'last credit applied', value: idleMs, display: idleMs === null ? 'never' : `${age(idleMs)} ago` },
  ];
  return result('consumer-lag', title, facts, problems);
};
